"""A course is every lesson file in one folder, in their `order`."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from gradtutor.errors import GradtutorError, LessonProblems, Problem
from gradtutor.lessons.load import display_path, load_lesson_file
from gradtutor.lessons.model import Exercise, Lesson, Parsons

LESSON_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Course:
    folder: Path
    lessons: tuple[Lesson, ...]

    def find(self, lesson_id: str) -> Lesson:
        """The lesson with this id, or an error that suggests the closest id."""
        for lesson in self.lessons:
            if lesson.id == lesson_id:
                return lesson
        ids = [lesson.id for lesson in self.lessons]
        close = difflib.get_close_matches(lesson_id, ids, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"lessons here: {', '.join(ids)}"
        raise GradtutorError(f"no lesson '{lesson_id}'", f"{hint} (see `gradtutor list`)")


    def exercises(self) -> dict[str, Exercise]:
        """Every exercise in the course by id, in course order (ids are unique course-wide)."""
        return {step.id: step for lesson in self.lessons for step in lesson.steps
                if isinstance(step, Exercise)}

    def find_exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id, or an error that suggests the closest id."""
        found = self.exercises()
        if exercise_id in found:
            return found[exercise_id]
        close = difflib.get_close_matches(exercise_id, list(found), n=1)
        hint = (f"did you mean '{close[0]}'?" if close
                else f"exercises: {', '.join(found) or 'none in these lessons'}")
        raise GradtutorError(f"no exercise '{exercise_id}'", hint)


def default_lessons_dir() -> Path:
    """The lessons shipped in the package, or the repository's `lessons/` in a source checkout."""
    here = Path(__file__).resolve().parent.parent
    shipped = here / "_lessons"
    return shipped if shipped.is_dir() else here.parent / "lessons"


def lesson_files(target: Path) -> list[Path]:
    """The lesson files a path names: the file itself, or the YAML files in a folder."""
    if target.is_file():
        return [target]
    if target.is_dir():
        return sorted(p for p in target.iterdir()
                      if p.suffix in LESSON_SUFFIXES and p.is_file() and not p.name.startswith("."))
    raise GradtutorError(f"no such file or folder: {display_path(target)}",
                         "check the path, or leave it out to use the built-in lessons")


def check_files(files: list[Path]) -> tuple[list[tuple[Lesson, Path]], list[Problem]]:
    """Load every file, collecting all problems, including clashes between lessons; the
    lessons in course order, each with its file."""
    lessons: list[tuple[Lesson, Path]] = []
    seen_exercises: dict[str, str] = {}
    problems: list[Problem] = []
    seen_ids: dict[str, str] = {}
    seen_orders: dict[int, str] = {}
    for path in files:
        lesson, found = load_lesson_file(path)
        problems += found
        if lesson is None:
            continue
        shown = display_path(path)
        if lesson.id in seen_ids:
            clash = (f"lesson id '{lesson.id}' is also used by {seen_ids[lesson.id]}; "
                     f"give each lesson its own id")
            problems.append(Problem(shown, 1, 1, clash))
        elif lesson.order in seen_orders:
            clash = (f"order {lesson.order} is also used by {seen_orders[lesson.order]}; "
                     f"give each lesson its own order")
            problems.append(Problem(shown, 1, 1, clash))
        else:
            seen_ids[lesson.id] = shown
            seen_orders[lesson.order] = shown
            lessons.append((lesson, path))
        for step in lesson.steps:
            if isinstance(step, (Exercise, Parsons)):  # what `gradtutor check` finds by id
                if step.id in seen_exercises and seen_exercises[step.id] != shown:
                    what = "exercise" if isinstance(step, Exercise) else "parsons step"
                    problems.append(Problem(shown, 1, 1, (
                        f"{what} id '{step.id}' is also used in {seen_exercises[step.id]}; "
                        f"exercise and parsons step ids are unique across all lessons")))
                seen_exercises.setdefault(step.id, shown)
    return sorted(lessons, key=lambda pair: pair[0].order), problems


def load_course(folder: Path | None = None) -> Course:
    """Every lesson in `folder` (default: the built-in course); LessonProblems if any is broken."""
    folder = folder or default_lessons_dir()
    files = lesson_files(folder)
    if not files:
        raise GradtutorError(f"no lesson files (*.yaml) in {display_path(folder)}",
                             "point --lessons at a folder of lesson YAML files")
    lessons, problems = check_files(files)
    if problems:
        raise LessonProblems(problems)
    return Course(folder, tuple(lesson for lesson, _ in lessons))
