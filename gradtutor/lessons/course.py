"""A course is every lesson file in one folder, in their `order`, in the learner's language:
each lesson's translation, beside it in `<folder>/<language>/`, is read only for a language
other than English."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from gradtutor.errors import GradtutorError, LessonProblems, Problem
from gradtutor.i18n import ENGLISH_CODE, Msg, msg
from gradtutor.lessons.exercise_rules import ExerciseRules
from gradtutor.lessons.load import display_path, load_lesson_file
from gradtutor.lessons.model import Exercise, Lesson, Parsons
from gradtutor.lessons.timing import Duration, duration

LESSON_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Place:
    """A lesson's place in its course: `position` of `total` (from 1), and the lessons that
    come before and after it, if any."""

    position: int
    total: int
    before: Lesson | None
    after: Lesson | None


@dataclass(frozen=True)
class Course:
    folder: Path
    lessons: tuple[Lesson, ...]
    lang: str = ENGLISH_CODE
    # Warnings for the learner: translations that could not be used, so English is shown.
    notes: tuple[Msg, ...] = ()
    # The lessons as written, in English, when `lessons` are translations of them.
    english: tuple[Lesson, ...] = ()

    def estimate(self, lesson: Lesson) -> Duration:
        """How long a lesson takes, estimated from its English in every language: a
        translation says the same, and counting words of Chinese, which puts no spaces
        between them, would say it takes a fraction of the time."""
        source = next((english for english in self.english if english.id == lesson.id), lesson)
        return duration(source)

    def find(self, lesson_id: str) -> Lesson:
        """The lesson with this id, or an error that suggests the closest id."""
        for lesson in self.lessons:
            if lesson.id == lesson_id:
                return lesson
        ids = [lesson.id for lesson in self.lessons]
        close = difflib.get_close_matches(lesson_id, ids, n=1)
        hint = (msg("did you mean '{close}'?", close=close[0]) if close
                else msg("lessons here: {ids}", ids=", ".join(ids)))
        raise GradtutorError(msg("no lesson '{lesson}'", lesson=lesson_id),
                             msg("{hint} (see `gradtutor list`)", hint=hint))

    def place(self, lesson_id: str) -> Place:
        """Where a lesson stands in the course: its position and its neighbours."""
        index = [lesson.id for lesson in self.lessons].index(lesson_id)
        return Place(index + 1, len(self.lessons),
                     self.lessons[index - 1] if index > 0 else None,
                     self.lessons[index + 1] if index + 1 < len(self.lessons) else None)

    def exercises(self) -> dict[str, Exercise]:
        """Every exercise in the course by id, in course order (ids are unique course-wide)."""
        return {step.id: step for lesson in self.lessons for step in lesson.steps
                if isinstance(step, Exercise)}

    def find_exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id, or an error that suggests the closest id."""
        found = self.exercises()
        if exercise_id in found:
            return found[exercise_id]
        raise GradtutorError(msg("no exercise '{exercise}'", exercise=exercise_id),
                             exercise_hint(exercise_id, list(found)))


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
    raise GradtutorError(msg("no such file or folder: {path}", path=display_path(target)),
                         msg("check the path, or leave it out to use the built-in lessons"))


def check_files(files: list[Path], rules: ExerciseRules
                ) -> tuple[list[tuple[Lesson, Path]], list[Problem]]:
    """Load every file, its exercises validated by `rules`, collecting all problems,
    including clashes between lessons; the lessons in course order, each with its file."""
    lessons: list[tuple[Lesson, Path]] = []
    seen_exercises: dict[str, str] = {}
    problems: list[Problem] = []
    seen_ids: dict[str, str] = {}
    seen_orders: dict[int, str] = {}
    for path in files:
        lesson, found = load_lesson_file(path, rules)
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


def exercise_hint(wanted: str, known: list[str]) -> Msg:
    """What to say after "no exercise 'x'": the closest id, else every id there is."""
    close = difflib.get_close_matches(wanted, known, n=1)
    if close:
        return msg("did you mean '{close}'?", close=close[0])
    if known:
        return msg("exercises: {ids}", ids=", ".join(known))
    return msg("these lessons have no exercises")


def load_course(folder: Path | None = None, lang: str = ENGLISH_CODE, *,
                rules: ExerciseRules) -> Course:
    """Every lesson in `folder` (default: the built-in course) in `lang`, its exercises
    validated by `rules` (checking's `EXERCISE_RULES`); LessonProblems if any is broken. A
    translation that cannot be used is a note, and its lesson stays English."""
    folder = folder or default_lessons_dir()
    files = lesson_files(folder)
    if not files:
        raise GradtutorError(msg("no lesson files (*.yaml) in {path}", path=display_path(folder)),
                             msg("point --lessons at a folder of lesson YAML files"))
    found, problems = check_files(files, rules)
    if problems:
        raise LessonProblems(problems)
    if lang == ENGLISH_CODE:  # English costs nothing: no translation is looked for
        return Course(folder, tuple(lesson for lesson, _ in found))
    from gradtutor.lessons.translate import in_language

    lessons: list[Lesson] = []
    notes: list[Msg] = []
    for lesson, path in found:
        localized, broken = in_language(lesson, path, lang)
        lessons.append(localized)
        if broken:
            notes.append(msg("warning: the {lang} translation of lesson '{lesson}' cannot be "
                             "used, so it is shown in English: {problem} (`gradtutor validate` "
                             "lists every problem)", lang=lang, lesson=lesson.id,
                             problem=str(broken[0])))
    return Course(folder, tuple(lessons), lang, tuple(notes),
                  tuple(lesson for lesson, _ in found))
