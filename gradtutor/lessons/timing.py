"""How long a lesson takes: an estimate from its text, for the core path and the optional
practice apart. Pure: a lesson in, minutes out.

The model: prose is read at 200 words a minute, code at 4 seconds a line, and each kind of
practice adds the time to do it (an exercise 2 minutes, ordering lines 1, a prediction or a
quiz question half a minute). A quiz's explanations are read only for the choices picked, so
they are not counted; nor is a choice's proof, which is never shown. A step marked
`optional: true` counts towards the optional practice. An author who measured better may set
`minutes` on the lesson: the core then takes that.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gradtutor.lessons.model import Demo, Exercise, Lesson, Parsons, Predict, Quiz, Slide, Step
from gradtutor.records import record

WORDS_PER_MINUTE = 200
SECONDS_PER_CODE_LINE = 4
PRACTICE_MINUTES = {Exercise: 2.0, Parsons: 1.0, Predict: 0.5}
QUESTION_MINUTES = 0.5


@record
class Duration:
    """Whole minutes, rounded up: the core path, and the optional practice on top of it."""

    core: int
    optional: int


def _words(*texts: str | None) -> int:
    return sum(len(text.split()) for text in texts if text)


def _code_lines(code: str | None) -> int:
    return sum(1 for line in (code or "").splitlines() if line.strip())


# What reading and doing one step asks: (words of prose, lines of code, minutes of practice).
Effort = tuple[int, int, float]


def _quiz(step: Quiz) -> Effort:
    words = _words(step.intro) + sum(
        _words(q.prompt, *(c.text for c in q.choices)) for q in step.questions)
    code = sum(_code_lines(q.code) for q in step.questions)
    return words, code, QUESTION_MINUTES * len(step.questions)


def _slide(step: Slide) -> Effort:
    return _words(step.body, step.notes), _code_lines(step.code), 0.0


def _demo(step: Demo) -> Effort:
    return _words(step.body), _code_lines(step.code), 0.0


def _exercise(step: Exercise) -> Effort:
    return _words(step.prompt, step.why), _code_lines(step.starter), PRACTICE_MINUTES[Exercise]


def _predict(step: Predict) -> Effort:
    words = _words(step.prompt, *(c.text for c in step.choices))
    return words, _code_lines(step.code), PRACTICE_MINUTES[Predict]


def _parsons(step: Parsons) -> Effort:
    return _words(step.prompt), len(step.lines), PRACTICE_MINUTES[Parsons]


# The effort of each kind of step (tests/test_step_kinds.py checks every kind has one).
EFFORT: dict[type[Step], Callable[[Any], Effort]] = {
    Slide: _slide, Quiz: _quiz, Exercise: _exercise, Predict: _predict, Parsons: _parsons,
    Demo: _demo}


def step_minutes(step: Step) -> float:
    """The estimated minutes one step takes."""
    words, code, extra = EFFORT[type(step)](step)
    return words / WORDS_PER_MINUTE + code * SECONDS_PER_CODE_LINE / 60 + extra


def is_optional(step: Step) -> bool:
    return bool(getattr(step, "optional", False))


def duration(lesson: Lesson) -> Duration:
    """The lesson's core and optional minutes (the core from `minutes` when the author set it)."""
    core = sum(step_minutes(s) for s in lesson.steps if not is_optional(s))
    optional = sum(step_minutes(s) for s in lesson.steps if is_optional(s))
    return Duration(core=lesson.minutes or math.ceil(core), optional=math.ceil(optional))
