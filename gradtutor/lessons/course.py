"""A course is every lesson file in one folder, in their `order`, in the learner's language:
each lesson's translation, beside it in `<folder>/<language>/`, is read only for a language
other than English.

`load_course` loads and validates every lesson, for the commands that need them all. A
command that shows one lesson (`start`, `show`) needs only the course's `Outline`: each
lesson's id, title and order, read from the first lines of its file, every time (so never
stale); it then loads that one lesson alone, and a broken lesson elsewhere is reported when
the learner reaches it, or runs `list` or `validate`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from gradtutor.errors import GradtutorError, LessonProblems, Problem
from gradtutor.i18n import ENGLISH_CODE, Msg, msg
from gradtutor.lessons.exercise_rules import ExerciseRules
from gradtutor.lessons.load import display_path, lesson_head, load_lesson_file, read_lesson_text
from gradtutor.lessons.model import Exercise, Lesson, Parsons
from gradtutor.lessons.timing import Duration, duration
from gradtutor.records import record

LESSON_SUFFIXES = (".yaml", ".yml")


@record
class Entry:
    """A lesson as the outline knows it, from the first lines of its file; its title is the
    English one, as written."""

    id: str
    title: str
    order: int
    path: Path


# A lesson as its neighbours name it (by id and title): loaded, or an outline's entry.
Titled = Lesson | Entry


@record
class Place:
    """A lesson's place in its course: `position` of `total` (from 1), and the lessons that
    come before and after it, if any."""

    position: int
    total: int
    before: Titled | None
    after: Titled | None


def place_in(lessons: tuple[Titled, ...], lesson_id: str) -> Place:
    """Where a lesson stands among `lessons` (in course order): its position, its neighbours."""
    index = [lesson.id for lesson in lessons].index(lesson_id)
    return Place(index + 1, len(lessons), lessons[index - 1] if index > 0 else None,
                 lessons[index + 1] if index + 1 < len(lessons) else None)


def find_id(lesson_id: str, ids: list[str]) -> int:
    """Where `lesson_id` is in `ids`, or an error that suggests the closest id."""
    if lesson_id in ids:
        return ids.index(lesson_id)
    close = difflib.get_close_matches(lesson_id, ids, n=1)
    hint = (msg("did you mean '{close}'?", close=close[0]) if close
            else msg("lessons here: {ids}", ids=", ".join(ids)))
    raise GradtutorError(msg("no lesson '{lesson}'", lesson=lesson_id),
                         msg("{hint} (see `gradtutor list`)", hint=hint))


@record
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
        return self.lessons[find_id(lesson_id, [lesson.id for lesson in self.lessons])]

    def place(self, lesson_id: str) -> Place:
        """Where a lesson stands in the course: its position and its neighbours."""
        return place_in(self.lessons, lesson_id)

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


@record
class Outline:
    """The course's lessons, in order, as their files state them, none of them loaded."""

    folder: Path
    entries: tuple[Entry, ...]

    def find(self, lesson_id: str) -> Entry:
        """The lesson with this id, or an error that suggests the closest id."""
        return self.entries[find_id(lesson_id, [entry.id for entry in self.entries])]

    def place(self, lesson_id: str) -> Place:
        return place_in(self.entries, lesson_id)


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


def _course_files(folder: Path | None) -> tuple[Path, list[Path]]:
    """The course's folder (default: the built-in course) and its lesson files; an error if
    it has none."""
    folder = folder or default_lessons_dir()
    files = lesson_files(folder)
    if not files:
        raise GradtutorError(msg("no lesson files (*.yaml) in {path}", path=display_path(folder)),
                             msg("point --lessons at a folder of lesson YAML files"))
    return folder, files


def _in_language(lesson: Lesson, path: Path, lang: str) -> tuple[Lesson, Msg | None]:
    """The lesson in `lang`, and a note when its translation cannot be used (it stays
    English then)."""
    if lang == ENGLISH_CODE:  # English costs nothing: no translation is looked for
        return lesson, None
    from gradtutor.lessons.translate import in_language

    localized, broken = in_language(lesson, path, lang)
    if not broken:
        return localized, None
    return localized, msg("warning: the {lang} translation of lesson '{lesson}' cannot be "
                          "used, so it is shown in English: {problem} (`gradtutor validate` "
                          "lists every problem)", lang=lang, lesson=lesson.id,
                          problem=str(broken[0]))


def load_course(folder: Path | None = None, lang: str = ENGLISH_CODE, *,
                rules: ExerciseRules) -> Course:
    """Every lesson in `folder` (default: the built-in course) in `lang`, its exercises
    validated by `rules` (checking's `EXERCISE_RULES`); LessonProblems if any is broken. A
    translation that cannot be used is a note, and its lesson stays English."""
    folder, files = _course_files(folder)
    found, problems = check_files(files, rules)
    if problems:
        raise LessonProblems(problems)
    said = [_in_language(lesson, path, lang) for lesson, path in found]
    return Course(folder, tuple(lesson for lesson, _ in said), lang,
                  tuple(note for _, note in said if note is not None),
                  tuple(lesson for lesson, _ in found) if lang != ENGLISH_CODE else ())


def course_outline(folder: Path | None = None) -> Outline | None:
    """The course's lessons in order, each as the first lines of its file state it; None
    when a file does not state its id, title and order plainly, or two lessons claim the
    same id or order: loading the whole course says what is wrong then."""
    folder, files = _course_files(folder)
    entries = []
    for path in files:
        text, _ = read_lesson_text(path)
        head = lesson_head(text) if text is not None else None
        if head is None:
            return None
        entries.append(Entry(*head, path))
    if (len({entry.id for entry in entries}) < len(entries)
            or len({entry.order for entry in entries}) < len(entries)):
        return None
    return Outline(folder, tuple(sorted(entries, key=lambda entry: entry.order)))


def load_one(entry: Entry, lang: str = ENGLISH_CODE, *,
             rules: ExerciseRules) -> tuple[Lesson, Msg | None]:
    """One lesson of an outline, loaded and validated alone, in `lang` (LessonProblems if it
    is broken), and the note on its translation if that cannot be used. What only the whole
    course can tell (an exercise id another lesson uses too) is left to the commands that
    load it all; a file that passed every check before, unchanged and checked by the same
    code, is not checked again beyond its structure (`load_lesson_file`'s `recheck`)."""
    lesson, problems = load_lesson_file(entry.path, rules, recheck=False)
    if problems or lesson is None:
        raise LessonProblems(problems)
    if lesson.id != entry.id:  # the outline read the file otherwise: it cannot be trusted
        raise LessonProblems([Problem(display_path(entry.path), 1, 1, (
            f"the lesson's id reads as '{entry.id}' at the start of the file but loads as "
            f"'{lesson.id}'; give it one plain `id:`"))])
    return _in_language(lesson, entry.path, lang)
