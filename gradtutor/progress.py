"""The learner's progress as immutable data, its transitions, and its JSON form.

Everything here is pure: a transition takes a Progress and returns a new one. The store
(`store.py`) applies transitions to the freshest copy on disk under a lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise, Lesson, Quiz

SCHEMA_VERSION = 1


class ProgressFormatError(ValueError):
    """The JSON is not progress this version of gradtutor can read; its message is a `msg()`,
    said in the learner's language where the store's warning shows it."""


@dataclass(frozen=True)
class QuizScore:
    score: int
    total: int
    at: str

    @property
    def fraction(self) -> float:
        return self.score / self.total if self.total else 0.0


@dataclass(frozen=True)
class ExerciseRecord:
    """How an exercise went: checks run, hints and solution seen, and whether it ever passed."""

    attempts: int = 0
    hints: int = 0
    solution_seen: bool = False
    passed: bool = False
    passed_at: str = ""  # the first pass


@dataclass(frozen=True)
class Prediction:
    """The learner's latest answer to a predict step (a letter) and whether it was right."""

    answer: str
    right: bool
    at: str


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


def next_lesson(lessons: tuple[Lesson, ...], progress: Progress) -> Lesson:
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


def _score_to_json(score: QuizScore) -> dict[str, Any]:
    return {"score": score.score, "total": score.total, "at": score.at}


def _exercise_to_json(record: ExerciseRecord) -> dict[str, Any]:
    return {"attempts": record.attempts, "hints": record.hints,
            "solution_seen": record.solution_seen, "passed": record.passed,
            "passed_at": record.passed_at}


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
                "predictions": {k: {"answer": v.answer, "right": v.right, "at": v.at}
                                for k, v in sorted(state.predictions.items())},
                "quiz_answers": {k: list(v) for k, v in sorted(state.quiz_answers.items())},
            }
            for lesson_id, state in sorted(progress.lessons.items())
        },
    }


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProgressFormatError(msg("{what} has the wrong type", what=what))
    return value


def _score_from_json(raw: Any, what: str) -> QuizScore:
    _expect(raw, dict, what)
    return QuizScore(_expect(raw.get("score"), int, what), _expect(raw.get("total"), int, what),
                     _expect(raw.get("at", ""), str, what))


def _scores(raw: Any, what: str) -> Mapping[str, QuizScore]:
    _expect(raw, dict, what)
    return MappingProxyType({str(k): _score_from_json(v, f"{what}.{k}") for k, v in raw.items()})


def _count(raw: Any, what: str) -> int:
    value: int = _expect(raw, int, what)
    if value < 0:
        raise ProgressFormatError(msg("{what} is negative", what=what))
    return value


def _exercises(raw: Any, what: str) -> Mapping[str, ExerciseRecord]:
    _expect(raw, dict, what)
    records: dict[str, ExerciseRecord] = {}
    for key, entry in raw.items():
        where = f"{what}.{key}"
        _expect(entry, dict, where)
        records[str(key)] = ExerciseRecord(
            attempts=_count(entry.get("attempts", 0), f"{where}.attempts"),
            hints=_count(entry.get("hints", 0), f"{where}.hints"),
            solution_seen=_expect(entry.get("solution_seen", False), bool,
                                  f"{where}.solution_seen"),
            passed=_expect(entry.get("passed", False), bool, f"{where}.passed"),
            passed_at=_expect(entry.get("passed_at", ""), str, f"{where}.passed_at"))
    return MappingProxyType(records)


def _predictions(raw: Any, what: str) -> Mapping[str, Prediction]:
    _expect(raw, dict, what)
    found: dict[str, Prediction] = {}
    for key, entry in raw.items():
        where = f"{what}.{key}"
        _expect(entry, dict, where)
        found[str(key)] = Prediction(_expect(entry.get("answer"), str, f"{where}.answer"),
                                     _expect(entry.get("right"), bool, f"{where}.right"),
                                     _expect(entry.get("at", ""), str, f"{where}.at"))
    return MappingProxyType(found)


def _quiz_answers(raw: Any, what: str) -> Mapping[str, tuple[str, ...]]:
    _expect(raw, dict, what)
    found: dict[str, tuple[str, ...]] = {}
    for key, answers in raw.items():
        where = f"{what}.{key}"
        found[str(key)] = tuple(_expect(a, str, where) for a in _expect(answers, list, where))
    return MappingProxyType(found)


# The fields each version of format 1 knows; any other is kept as it was (see `unknown`).
_FILE_FIELDS = frozenset({"version", "lessons"})
_LESSON_FIELDS = frozenset({"step", "seen", "finished", "last_quiz", "best_quiz", "updated",
                            "exercises", "predictions", "quiz_answers"})


def _unknown(raw: dict[str, Any], known: frozenset[str]) -> Mapping[str, Any]:
    return MappingProxyType({str(k): v for k, v in raw.items() if k not in known})


def from_json(raw: Any) -> Progress:
    """Progress from parsed JSON; ProgressFormatError if it is not a version we can read."""
    _expect(raw, dict, "the file")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProgressFormatError(msg("it has no format version"))
    if version > SCHEMA_VERSION:
        raise ProgressFormatError(msg("it was written by a newer gradtutor (format {version})",
                                     version=version))
    if version < 1:
        raise ProgressFormatError(msg("format {version} is unknown", version=version))
    lessons: dict[str, LessonProgress] = {}
    for lesson_id, state in _expect(raw.get("lessons", {}), dict, "lessons").items():
        what = f"lessons.{lesson_id}"
        _expect(state, dict, what)
        step = state.get("step")
        if step is not None:
            _expect(step, str, f"{what}.step")
        seen = _expect(state.get("seen", []), list, f"{what}.seen")
        lessons[str(lesson_id)] = LessonProgress(
            step=step,
            seen=frozenset(_expect(s, str, f"{what}.seen") for s in seen),
            finished=_expect(state.get("finished", False), bool, f"{what}.finished"),
            last_quiz=_scores(state.get("last_quiz", {}), f"{what}.last_quiz"),
            best_quiz=_scores(state.get("best_quiz", {}), f"{what}.best_quiz"),
            updated=_expect(state.get("updated", ""), str, f"{what}.updated"),
            # added in 0.2 within format 1: older files have neither, older tutors ignore them
            exercises=_exercises(state.get("exercises", {}), f"{what}.exercises"),
            predictions=_predictions(state.get("predictions", {}), f"{what}.predictions"),
            # added later still, the same way
            quiz_answers=_quiz_answers(state.get("quiz_answers", {}), f"{what}.quiz_answers"),
            unknown=_unknown(state, _LESSON_FIELDS),
        )
    return Progress(MappingProxyType(lessons), unknown=_unknown(raw, _FILE_FIELDS))
