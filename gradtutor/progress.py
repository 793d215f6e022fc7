"""The learner's progress as immutable data, its transitions, and its JSON form.

Everything here is pure: a transition takes a Progress and returns a new one. The store
(`store.py`) applies transitions to the freshest copy on disk under a lock. Reading the JSON
sets a bad entry aside on its own and keeps every field a newer gradtutor wrote.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise, Lesson, Quiz
from gradtutor.records import record

if TYPE_CHECKING:
    from gradtutor.lessons.course import Entry

# A lesson, or what stands for one in the course's outline (its id is what counts here).
_Named = TypeVar("_Named", bound="Lesson | Entry")

SCHEMA_VERSION = 1


class ProgressFormatError(ValueError):
    """The JSON is not progress this version of gradtutor can read; its message is a `msg()`,
    said in the learner's language where the store's warning shows it."""


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


# Each record keeps the fields a newer gradtutor wrote into it that this one does not know
# (`unknown`), and writes them back as they were; a new record replaces an old one whole.


@record
class QuizScore:
    score: int
    total: int
    at: str
    unknown: Mapping[str, Any] = field(default_factory=_empty)

    @property
    def fraction(self) -> float:
        return self.score / self.total if self.total else 0.0


@record
class ExerciseRecord:
    """How an exercise went: checks run, hints and solution seen, and whether it ever passed."""

    attempts: int = 0
    hints: int = 0
    solution_seen: bool = False
    passed: bool = False
    passed_at: str = ""  # the first pass
    unknown: Mapping[str, Any] = field(default_factory=_empty)


@record
class Prediction:
    """The learner's latest answer to a predict step (a letter) and whether it was right."""

    answer: str
    right: bool
    at: str
    unknown: Mapping[str, Any] = field(default_factory=_empty)


@record
class LessonProgress:
    """Where the learner is in one lesson. Steps are named by their stable ids."""

    step: str | None = None
    seen: frozenset[str] = frozenset()
    finished: bool = False
    last_quiz: Mapping[str, QuizScore] = field(default_factory=lambda: MappingProxyType({}))
    best_quiz: Mapping[str, QuizScore] = field(default_factory=lambda: MappingProxyType({}))
    updated: str = ""
    exercises: Mapping[str, ExerciseRecord] = field(default_factory=_empty)
    predictions: Mapping[str, Prediction] = field(default_factory=_empty)
    # a quiz not finished yet: its answers so far, each the letters chosen ("b", "ac")
    quiz_answers: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    # fields a newer gradtutor wrote that this one does not know, written back as they were
    unknown: Mapping[str, Any] = field(default_factory=_empty)


@record
class Progress:
    lessons: Mapping[str, LessonProgress] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[str, Any] = field(default_factory=_empty)  # as in LessonProgress

    def of(self, lesson_id: str) -> LessonProgress:
        return self.lessons.get(lesson_id, LessonProgress())


def _with(progress: Progress, lesson_id: str, lesson: LessonProgress) -> Progress:
    lessons = dict(progress.lessons)
    lessons[lesson_id] = lesson
    return replace(progress, lessons=MappingProxyType(lessons))


def visit(progress: Progress, lesson_id: str, step_id: str, now: str) -> Progress:
    """The learner is now looking at `step_id`."""
    current = progress.of(lesson_id)
    return _with(progress, lesson_id,
                 replace(current, step=step_id, seen=current.seen | {step_id}, updated=now))


def finish(progress: Progress, lesson_id: str, now: str) -> Progress:
    """The learner went past the last step."""
    return _with(progress, lesson_id, replace(progress.of(lesson_id), finished=True, updated=now))


def record_quiz(progress: Progress, lesson_id: str, quiz_id: str, score: int, total: int,
                now: str) -> Progress:
    """Keep the latest and the best score of one quiz; its answers so far are done with."""
    current = progress.of(lesson_id)
    result = QuizScore(score, total, now)
    best = current.best_quiz.get(quiz_id)
    best_quiz = dict(current.best_quiz)
    if best is None or result.fraction >= best.fraction:
        best_quiz[quiz_id] = result
    last_quiz = {**current.last_quiz, quiz_id: result}
    answers = {k: v for k, v in current.quiz_answers.items() if k != quiz_id}
    return _with(progress, lesson_id, replace(
        current, last_quiz=MappingProxyType(last_quiz),
        best_quiz=MappingProxyType(best_quiz), quiz_answers=MappingProxyType(answers),
        updated=now))


def record_quiz_answers(progress: Progress, lesson_id: str, quiz_id: str,
                        answers: tuple[str, ...], now: str) -> Progress:
    """The answers submitted so far in a quiz not finished yet, each as its letters, so that
    coming back to the quiz goes on from there; none forgets them."""
    current = progress.of(lesson_id)
    kept = {k: v for k, v in current.quiz_answers.items() if k != quiz_id}
    if answers:
        kept[quiz_id] = answers
    return _with(progress, lesson_id, replace(current, quiz_answers=MappingProxyType(kept),
                                              updated=now))


def quiz_passed(quiz: Quiz, score: int, total: int) -> bool:
    """Whether `score` of `total` passes `quiz`: the one place this is decided."""
    return total > 0 and score / total >= quiz.pass_mark


def exercises_solved(lesson: Lesson, state: LessonProgress) -> tuple[int, int]:
    """How many of the lesson's exercises have ever passed, and how many it has."""
    ids = [step.id for step in lesson.steps if isinstance(step, Exercise)]
    return sum(_passed(state, exercise_id) for exercise_id in ids), len(ids)


def _exercise(progress: Progress, lesson_id: str, exercise_id: str, now: str,
              change: Callable[[ExerciseRecord], ExerciseRecord]) -> Progress:
    current = progress.of(lesson_id)
    record = change(current.exercises.get(exercise_id, ExerciseRecord()))
    exercises = MappingProxyType({**current.exercises, exercise_id: record})
    return _with(progress, lesson_id, replace(current, exercises=exercises, updated=now))


def record_check(progress: Progress, lesson_id: str, exercise_id: str, passed: bool,
                 now: str) -> Progress:
    """One more check of the learner's file ran; once passed, an exercise stays passed."""
    def change(r: ExerciseRecord) -> ExerciseRecord:
        first_pass = passed and not r.passed
        return replace(r, attempts=r.attempts + 1, passed=r.passed or passed,
                       passed_at=now if first_pass else r.passed_at)

    return _exercise(progress, lesson_id, exercise_id, now, change)


def record_hints(progress: Progress, lesson_id: str, exercise_id: str, shown: int,
                 now: str) -> Progress:
    """The learner has seen the first `shown` hints (the most ever seen is kept)."""
    return _exercise(progress, lesson_id, exercise_id, now,
                     lambda r: replace(r, hints=max(r.hints, shown)))


def record_solution(progress: Progress, lesson_id: str, exercise_id: str, now: str) -> Progress:
    """The learner chose to see the solution."""
    return _exercise(progress, lesson_id, exercise_id, now,
                     lambda r: replace(r, solution_seen=True))


def record_prediction(progress: Progress, lesson_id: str, step_id: str, answer: str,
                      right: bool, now: str) -> Progress:
    """The learner's answer to a predict step; the latest one is kept."""
    current = progress.of(lesson_id)
    predictions = MappingProxyType({**current.predictions,
                                    step_id: Prediction(answer, right, now)})
    return _with(progress, lesson_id, replace(current, predictions=predictions, updated=now))


def restart(progress: Progress, lesson_id: str) -> Progress:
    """Start a lesson over: position, completion and a quiz half done go; quiz bests and how
    the exercises went stay as history."""
    current = progress.of(lesson_id)
    return _with(progress, lesson_id, LessonProgress(best_quiz=current.best_quiz,
                                                     exercises=current.exercises,
                                                     unknown=current.unknown))


def reset(progress: Progress, lesson_id: str | None = None) -> Progress:
    """Forget one lesson, or everything."""
    if lesson_id is None:
        return Progress()
    lessons = {k: v for k, v in progress.lessons.items() if k != lesson_id}
    return replace(progress, lessons=MappingProxyType(lessons))


def resume_index(lesson: Lesson, state: LessonProgress) -> int:
    """The step to open: where the learner stopped, or the first step if that step is gone."""
    if state.step is None:
        return 0
    index = lesson.index_of(state.step)
    return 0 if index is None else index


def next_lesson(lessons: tuple[_Named, ...], progress: Progress) -> _Named:
    """The first lesson in course order that is not finished; the first lesson if all are."""
    for lesson in lessons:
        if not progress.of(lesson.id).finished:
            return lesson
    return lessons[0]


def exercise_to_practise(lessons: tuple[Lesson, ...],
                         progress: Progress) -> tuple[Lesson, Exercise] | None:
    """The exercise the learner is on, if it is not passed yet; else the first exercise in
    course order not passed yet; None when every exercise is passed (or there are none)."""
    current = next_lesson(lessons, progress)
    state = progress.of(current.id)
    index = None if state.step is None else current.index_of(state.step)
    if index is not None:
        step = current.steps[index]
        if isinstance(step, Exercise) and not _passed(state, step.id):
            return current, step
    for lesson in lessons:
        for step in lesson.steps:
            if isinstance(step, Exercise) and not _passed(progress.of(lesson.id), step.id):
                return lesson, step
    return None


def _passed(state: LessonProgress, exercise_id: str) -> bool:
    record = state.exercises.get(exercise_id)
    return record is not None and record.passed


# --- JSON form -------------------------------------------------------------------------
#
# Reading is forgiving entry by entry: a value that cannot be used is left out on its own
# (a `SetAside` says which and why), and everything else in the file is kept. Only a file
# that is not progress at all (not JSON, not an object, another format) is refused whole.

MAX_COUNT = 10**9  # checks run or hints seen: more comes from a damaged file, not a learner
MAX_QUESTIONS = 1000  # questions in one quiz, far beyond any lesson's
_MAX_DIGITS = 4000  # Python refuses to read an int from more digits (4300, by default)


class Unreadable:
    """A number in the file that has no honest value here: more digits than Python reads,
    NaN or an infinity. It stands in for the number while parsing, so that it costs one entry
    set aside instead of a file that cannot be read."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Unreadable({self.shown!r})"

    @property
    def shown(self) -> str:
        """The number as the warning shows it: a long one cut short."""
        return self.text if len(self.text) <= 24 else f"{self.text[:12]}…"


def _int(text: str) -> int | Unreadable:
    if len(text) > _MAX_DIGITS:
        return Unreadable(text)
    try:
        return int(text)
    except ValueError:  # a lower limit set with PYTHONINTMAXSTRDIGITS
        return Unreadable(text)


def _float(text: str) -> float | Unreadable:
    value = float(text)
    return value if math.isfinite(value) else Unreadable(text)  # 1e999 reads as infinity


@record
class SetAside:
    """One entry of the file left out of the progress read from it: `where` it was (as
    `lessons.grad.best_quiz.check`) and why, a `msg()`."""

    where: str
    reason: str


@record
class Read:
    """Progress read from a file, and what in the file could not be used."""

    progress: Progress
    set_aside: tuple[SetAside, ...] = ()


def parse(data: bytes) -> Read:
    """Progress from the bytes of a progress file (a UTF-8 byte order mark is allowed);
    ProgressFormatError when the file as a whole is not progress this version reads."""
    try:
        raw = json.loads(data.decode("utf-8-sig"), parse_int=_int, parse_float=_float,
                         parse_constant=Unreadable)
    except RecursionError:
        raise ProgressFormatError(msg("it is nested too deeply")) from None
    except ValueError:  # UnicodeDecodeError and JSONDecodeError among them
        raise ProgressFormatError(msg("it is not valid JSON")) from None
    return from_json(raw)


def _score_to_json(score: QuizScore) -> dict[str, Any]:
    return {**score.unknown, "score": score.score, "total": score.total, "at": score.at}


def _exercise_to_json(record: ExerciseRecord) -> dict[str, Any]:
    return {**record.unknown, "attempts": record.attempts, "hints": record.hints,
            "solution_seen": record.solution_seen, "passed": record.passed,
            "passed_at": record.passed_at}


def _prediction_to_json(prediction: Prediction) -> dict[str, Any]:
    return {**prediction.unknown, "answer": prediction.answer, "right": prediction.right,
            "at": prediction.at}


def to_json(progress: Progress) -> dict[str, Any]:
    return {
        **progress.unknown,
        "version": SCHEMA_VERSION,
        "lessons": {
            lesson_id: {
                **state.unknown,
                "step": state.step,
                "seen": sorted(state.seen),
                "finished": state.finished,
                "last_quiz": {k: _score_to_json(v) for k, v in state.last_quiz.items()},
                "best_quiz": {k: _score_to_json(v) for k, v in state.best_quiz.items()},
                "updated": state.updated,
                "exercises": {k: _exercise_to_json(v) for k, v in sorted(state.exercises.items())},
                "predictions": {k: _prediction_to_json(v)
                                for k, v in sorted(state.predictions.items())},
                "quiz_answers": {k: list(v) for k, v in sorted(state.quiz_answers.items())},
            }
            for lesson_id, state in sorted(progress.lessons.items())
        },
    }


def _at(where: str, key: object) -> str:
    return f"{where}.{key}" if where else str(key)


class _Bad(Exception):
    """A value that cannot be used; `reason` is a `msg()`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _typed(value: Any, kind: type) -> Any:
    if isinstance(value, Unreadable):
        raise _Bad(msg("it is a number gradtutor cannot use ({number})", number=value.shown))
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(msg("it has the wrong type"))
    return value


def _count(value: Any, limit: int = MAX_COUNT) -> int:
    number: int = _typed(value, int)
    if number < 0:
        raise _Bad(msg("it is negative"))
    if number > limit:
        raise _Bad(msg("it is more than {limit}", limit=limit))
    return number


def _text(value: Any) -> str:
    text: str = _typed(value, str)
    return text


def _flag(value: Any) -> bool:
    flag: bool = _typed(value, bool)
    return flag


def _step(value: Any) -> str | None:
    return None if value is None else _text(value)


def _required(entry: dict[str, Any], key: str, read: Callable[[Any], Any]) -> Any:
    """A field a record cannot do without: a bad one sets the whole record aside."""
    if key not in entry:
        raise _Bad(msg("{field}: it is missing", field=key))
    try:
        return read(entry[key])
    except _Bad as bad:
        raise _Bad(msg("{field}: {reason}", field=key, reason=bad.reason)) from None


class _Reader:
    """Reads the parts of one file, collecting what it sets aside."""

    def __init__(self) -> None:
        self.set_aside: list[SetAside] = []

    def drop(self, where: str, reason: str) -> None:
        self.set_aside.append(SetAside(where, reason))

    def field(self, raw: dict[str, Any], key: str, default: Any,
              read: Callable[[Any], Any], where: str) -> Any:
        """A field with a default: a bad one is set aside alone and the default used."""
        if key not in raw:
            return default
        try:
            return read(raw[key])
        except _Bad as bad:
            self.drop(_at(where, key), bad.reason)
            return default

    def entries(self, raw: dict[str, Any], key: str,
                read: Callable[[Any, str], Any], where: str) -> Mapping[str, Any]:
        """A map of records: a bad record is set aside alone."""
        here = _at(where, key)
        value = raw.get(key, {})
        if not isinstance(value, dict):
            self.drop(here, msg("it has the wrong type"))
            return _empty()
        found: dict[str, Any] = {}
        for name, entry in value.items():
            try:
                found[str(name)] = read(entry, _at(here, name))
            except _Bad as bad:
                self.drop(_at(here, name), bad.reason)
        return MappingProxyType(found)

    def unknown(self, raw: dict[str, Any], known: frozenset[str],
                where: str) -> Mapping[str, Any]:
        """Fields this version does not know, kept to be written back as they were; one
        holding a number that cannot be written back honestly is set aside."""
        kept: dict[str, Any] = {}
        for key, value in raw.items():
            if key in known:
                continue
            if _holds_unreadable(value):
                self.drop(_at(where, key), msg("it holds a number gradtutor cannot use"))
            else:
                kept[str(key)] = value
        return MappingProxyType(kept)

    def score(self, raw: Any, where: str) -> QuizScore:
        entry = _typed(raw, dict)
        score = _required(entry, "score", _count)
        total = _required(entry, "total", lambda v: _count(v, MAX_QUESTIONS))
        if total == 0:
            raise _Bad(msg("a quiz of 0 questions has no score"))
        if score > total:
            raise _Bad(msg("the score {score} is more than the total {total}", score=score,
                           total=total))
        return QuizScore(score, total, self.field(entry, "at", "", _text, where),
                         self.unknown(entry, _SCORE_FIELDS, where))

    def exercise(self, raw: Any, where: str) -> ExerciseRecord:
        entry = _typed(raw, dict)
        return ExerciseRecord(
            attempts=self.field(entry, "attempts", 0, _count, where),
            hints=self.field(entry, "hints", 0, _count, where),
            solution_seen=self.field(entry, "solution_seen", False, _flag, where),
            passed=self.field(entry, "passed", False, _flag, where),
            passed_at=self.field(entry, "passed_at", "", _text, where),
            unknown=self.unknown(entry, _EXERCISE_FIELDS, where))

    def prediction(self, raw: Any, where: str) -> Prediction:
        entry = _typed(raw, dict)
        return Prediction(_required(entry, "answer", _text), _required(entry, "right", _flag),
                          self.field(entry, "at", "", _text, where),
                          self.unknown(entry, _PREDICTION_FIELDS, where))

    def answers(self, raw: Any, where: str) -> tuple[str, ...]:
        return tuple(_text(a) for a in _typed(raw, list))

    def seen(self, raw: dict[str, Any], where: str) -> frozenset[str]:
        value = raw.get("seen", [])
        if not isinstance(value, list):
            self.drop(f"{where}.seen", msg("it has the wrong type"))
            return frozenset()
        found = set()
        for i, item in enumerate(value):
            try:
                found.add(_text(item))
            except _Bad as bad:
                self.drop(f"{where}.seen[{i}]", bad.reason)
        return frozenset(found)

    def lesson(self, raw: Any, where: str) -> LessonProgress:
        state = _typed(raw, dict)
        return LessonProgress(
            step=self.field(state, "step", None, _step, where),
            seen=self.seen(state, where),
            finished=self.field(state, "finished", False, _flag, where),
            last_quiz=self.entries(state, "last_quiz", self.score, where),
            best_quiz=self.entries(state, "best_quiz", self.score, where),
            updated=self.field(state, "updated", "", _text, where),
            # added in 0.2 within format 1: older files have neither, older tutors ignore them
            exercises=self.entries(state, "exercises", self.exercise, where),
            predictions=self.entries(state, "predictions", self.prediction, where),
            # added later still, the same way
            quiz_answers=self.entries(state, "quiz_answers", self.answers, where),
            unknown=self.unknown(state, _LESSON_FIELDS, where),
        )


def _holds_unreadable(value: Any) -> bool:
    stack = [value]  # no recursion: a deep value must not overflow the stack here
    while stack:
        item = stack.pop()
        if isinstance(item, Unreadable):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# The fields each version of format 1 knows; any other is kept as it was (see `unknown`).
_FILE_FIELDS = frozenset({"version", "lessons"})
_LESSON_FIELDS = frozenset({"step", "seen", "finished", "last_quiz", "best_quiz", "updated",
                            "exercises", "predictions", "quiz_answers"})
_SCORE_FIELDS = frozenset({"score", "total", "at"})
_EXERCISE_FIELDS = frozenset({"attempts", "hints", "solution_seen", "passed", "passed_at"})
_PREDICTION_FIELDS = frozenset({"answer", "right", "at"})


def from_json(raw: Any) -> Read:
    """Progress from parsed JSON, with what was set aside in it; ProgressFormatError if the
    whole is not progress this version can read."""
    if not isinstance(raw, dict):
        raise ProgressFormatError(msg("the file has the wrong type"))
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProgressFormatError(msg("it has no format version"))
    if version > SCHEMA_VERSION:
        raise ProgressFormatError(msg("it was written by a newer gradtutor (format {version})",
                                     version=version))
    if version < 1:
        raise ProgressFormatError(msg("format {version} is unknown", version=version))
    reader = _Reader()
    lessons = reader.entries(raw, "lessons", reader.lesson, "")
    unknown = reader.unknown(raw, _FILE_FIELDS, "")
    progress = Progress(MappingProxyType(dict(lessons)), unknown=unknown)
    return Read(progress, tuple(reader.set_aside))
