"""The learner's progress as immutable data, its transitions, and its JSON form.

Everything here is pure: a transition takes a Progress and returns a new one. The store
(`store.py`) applies transitions to the freshest copy on disk under a lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from gradtutor.lessons.model import Lesson

SCHEMA_VERSION = 1


class ProgressFormatError(ValueError):
    """The JSON is not progress this version of gradtutor can read."""


@dataclass(frozen=True)
class QuizScore:
    score: int
    total: int
    at: str

    @property
    def fraction(self) -> float:
        return self.score / self.total if self.total else 0.0


@dataclass(frozen=True)
class LessonProgress:
    """Where the learner is in one lesson. Steps are named by their stable ids."""

    step: str | None = None
    seen: frozenset[str] = frozenset()
    finished: bool = False
    last_quiz: Mapping[str, QuizScore] = field(default_factory=lambda: MappingProxyType({}))
    best_quiz: Mapping[str, QuizScore] = field(default_factory=lambda: MappingProxyType({}))
    updated: str = ""


@dataclass(frozen=True)
class Progress:
    lessons: Mapping[str, LessonProgress] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, lesson_id: str) -> LessonProgress:
        return self.lessons.get(lesson_id, LessonProgress())


def _with(progress: Progress, lesson_id: str, lesson: LessonProgress) -> Progress:
    lessons = dict(progress.lessons)
    lessons[lesson_id] = lesson
    return Progress(MappingProxyType(lessons))


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
    """Keep the latest and the best score of one quiz."""
    current = progress.of(lesson_id)
    result = QuizScore(score, total, now)
    best = current.best_quiz.get(quiz_id)
    best_quiz = dict(current.best_quiz)
    if best is None or result.fraction >= best.fraction:
        best_quiz[quiz_id] = result
    last_quiz = {**current.last_quiz, quiz_id: result}
    return _with(progress, lesson_id, replace(
        current, last_quiz=MappingProxyType(last_quiz),
        best_quiz=MappingProxyType(best_quiz), updated=now))


def restart(progress: Progress, lesson_id: str) -> Progress:
    """Start a lesson over: position and completion go, quiz bests stay as history."""
    current = progress.of(lesson_id)
    return _with(progress, lesson_id, LessonProgress(best_quiz=current.best_quiz))


def reset(progress: Progress, lesson_id: str | None = None) -> Progress:
    """Forget one lesson, or everything."""
    if lesson_id is None:
        return Progress()
    lessons = {k: v for k, v in progress.lessons.items() if k != lesson_id}
    return Progress(MappingProxyType(lessons))


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


# --- JSON form -------------------------------------------------------------------------


def _score_to_json(score: QuizScore) -> dict[str, Any]:
    return {"score": score.score, "total": score.total, "at": score.at}


def to_json(progress: Progress) -> dict[str, Any]:
    return {
        "version": SCHEMA_VERSION,
        "lessons": {
            lesson_id: {
                "step": state.step,
                "seen": sorted(state.seen),
                "finished": state.finished,
                "last_quiz": {k: _score_to_json(v) for k, v in state.last_quiz.items()},
                "best_quiz": {k: _score_to_json(v) for k, v in state.best_quiz.items()},
                "updated": state.updated,
            }
            for lesson_id, state in sorted(progress.lessons.items())
        },
    }


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProgressFormatError(f"{what} has the wrong type")
    return value


def _score_from_json(raw: Any, what: str) -> QuizScore:
    _expect(raw, dict, what)
    return QuizScore(_expect(raw.get("score"), int, what), _expect(raw.get("total"), int, what),
                     _expect(raw.get("at", ""), str, what))


def _scores(raw: Any, what: str) -> Mapping[str, QuizScore]:
    _expect(raw, dict, what)
    return MappingProxyType({str(k): _score_from_json(v, f"{what}.{k}") for k, v in raw.items()})


def from_json(raw: Any) -> Progress:
    """Progress from parsed JSON; ProgressFormatError if it is not a version we can read."""
    _expect(raw, dict, "the file")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProgressFormatError("it has no format version")
    if version > SCHEMA_VERSION:
        raise ProgressFormatError(f"it was written by a newer gradtutor (format {version})")
    if version < 1:
        raise ProgressFormatError(f"format {version} is unknown")
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
        )
    return Progress(MappingProxyType(lessons))
