"""How long a lesson takes: an estimate from its text, for the core path and the optional
practice apart. Pure: a lesson in, minutes out.

The model counts every text a step's screens show a learner who takes the step: its title,
its prose (body, notes, prompt, a quiz's intro, a chart's title), every choice of a question
or prediction with the explanation of each (the quiz screen shows every choice's after an
answer), an exercise's explanation (shown once it passes), and its code, a line at a time. A
hint, a Parsons line's explanation (shown for a wrong order) and a choice's proof (never
shown) are not counted: a learner sees them only by asking or erring. Prose is read at the
fluent reader's rate, code at its own, and each kind of practice adds the time to do it. The
rates are a fluent adult's, measured (docs/lessons.md, "How long a lesson takes", names the
sources); a beginner takes longer, and the README gives that range too. A step marked
`optional: true` counts towards the optional practice. An author who measured better may set
`minutes` on the lesson: the core then takes that.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gradtutor.lessons.model import (
    Choice,
    Demo,
    Exercise,
    Lesson,
    Parsons,
    Predict,
    Quiz,
    Slide,
    Step,
)
from gradtutor.records import record


@record
class Rates:
    """How fast a reader goes: words of prose a minute, seconds a line of code, and the
    minutes each kind of practice takes (an exercise, an ordering step, a prediction, a demo
    run and read, a quiz question)."""

    words_per_minute: float
    seconds_per_code_line: float
    exercise: float
    parsons: float
    predict: float
    demo: float
    question: float


# A fluent adult: 238 words a minute is the mean silent reading rate of non-fiction
# (Brysbaert 2019); the rest, the times the content review of 2026-12-05 measured.
FLUENT = Rates(words_per_minute=238, seconds_per_code_line=6, exercise=3.0, parsons=1.5,
               predict=0.75, demo=0.5, question=1.0)
# A beginner: slower reading (130 words a minute, about a second-language or careful
# technical reader's), code read line by line, an exercise a minute longer.
BEGINNER = Rates(words_per_minute=130, seconds_per_code_line=8, exercise=4.0, parsons=1.5,
                 predict=0.75, demo=0.5, question=1.0)


@record
class Duration:
    """Whole minutes, rounded up: the core path, and the optional practice on top of it."""

    core: int
    optional: int


def _words(*texts: str | None) -> int:
    return sum(len(text.split()) for text in texts if text)


def _code_lines(code: str | None) -> int:
    return sum(1 for line in (code or "").splitlines() if line.strip())


def _choices(choices: tuple[Choice, ...]) -> int:
    return _words(*(c.text for c in choices), *(c.why for c in choices))


# What reading and doing one step asks a reader at given rates: (words of prose, lines of
# code, minutes of practice).
Effort = tuple[int, int, float]


def _quiz(step: Quiz, rates: Rates) -> Effort:
    words = _words(step.title, step.intro) + sum(
        _words(q.prompt) + _choices(q.choices) for q in step.questions)
    code = sum(_code_lines(q.code) for q in step.questions)
    return words, code, rates.question * len(step.questions)


def _slide(step: Slide, rates: Rates) -> Effort:
    return _words(step.title, step.body, step.notes), _code_lines(step.code), 0.0


def _demo(step: Demo, rates: Rates) -> Effort:
    chart = step.chart.title if step.chart is not None else None
    return _words(step.title, step.body, chart), _code_lines(step.code), rates.demo


def _exercise(step: Exercise, rates: Rates) -> Effort:
    return (_words(step.title, step.prompt, step.why), _code_lines(step.starter),
            rates.exercise)


def _predict(step: Predict, rates: Rates) -> Effort:
    words = _words(step.title, step.prompt) + _choices(step.choices)
    return words, _code_lines(step.code), rates.predict


def _parsons(step: Parsons, rates: Rates) -> Effort:
    return _words(step.title, step.prompt), len(step.lines), rates.parsons


# The effort of each kind of step (tests/test_step_kinds.py checks every kind has one).
EFFORT: dict[type[Step], Callable[[Any, Rates], Effort]] = {
    Slide: _slide, Quiz: _quiz, Exercise: _exercise, Predict: _predict, Parsons: _parsons,
    Demo: _demo}


def step_minutes(step: Step, rates: Rates = FLUENT) -> float:
    """The estimated minutes one step takes a reader at `rates`."""
    words, code, practice = EFFORT[type(step)](step, rates)
    return words / rates.words_per_minute + code * rates.seconds_per_code_line / 60 + practice


def is_optional(step: Step) -> bool:
    return bool(getattr(step, "optional", False))


def core_minutes(lesson: Lesson, rates: Rates = FLUENT) -> float:
    """The core path's estimated minutes, unrounded, whatever the author set."""
    return sum(step_minutes(s, rates) for s in lesson.steps if not is_optional(s))


def duration(lesson: Lesson, rates: Rates = FLUENT) -> Duration:
    """The lesson's core and optional minutes (the core from `minutes` when the author set it)."""
    optional = sum(step_minutes(s, rates) for s in lesson.steps if is_optional(s))
    return Duration(core=lesson.minutes or math.ceil(core_minutes(lesson, rates)),
                    optional=math.ceil(optional))
