"""Every screen of the `grad` lesson localized to zh-CN, rendered as the tutor draws it, for
the Chinese screen tests (test_render_zh, test_zh_no_english)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from narrowing import view_as
from rich.console import Console

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.snippet import SnippetResult
from gradtutor.i18n import Translator, translator
from gradtutor.lessons.course import default_lessons_dir, load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Parsons, Predict, Quiz, Step
from gradtutor.lessons.translate import Translation, load_translation, localize
from gradtutor.ui.render import Look
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.events import Choose, SnippetDone, Unknown
from gradtutor.walk.machine import begin, handle
from gradtutor.walk.parsons import ParsonsView
from gradtutor.walk.state import WalkState

# --- the lesson in Chinese -----------------------------------------------------------------


@cache
def english() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("grad")


@cache
def translation() -> Translation:
    found, problems = load_translation(default_lessons_dir() / "grad.yaml", "zh-CN")
    assert problems == [] and found is not None
    return found


def in_chinese(drop: tuple[str | None, str] | None = None) -> Lesson:
    """The grad lesson localized to zh-CN; `drop` (step id, field path) leaves one text out
    of the translation, so it shows in English."""
    entries = dict(translation().entries)
    if drop is not None:
        assert any((k.step, k.path) == drop for k in entries), drop
        entries = {k: v for k, v in entries.items() if (k.step, k.path) != drop}
    lesson, _report = localize(english(), translation()._replace(entries=entries), "zh-CN")
    return lesson


@cache
def zh() -> Translator:
    return translator("zh-CN")


def render(renderable: object, width: int) -> list[str]:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=False, color_system=None)
    console.print(renderable)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


# --- every screen a learner meets ----------------------------------------------------------


def result_for(step: Step) -> SnippetResult:
    """What running the step's code might give: a value shown, a falling series, output."""
    series: tuple[tuple[str, tuple[float, ...]], ...] = ()
    output = ""
    if isinstance(step, Demo):
        names = step.chart.series if step.chart is not None else ()
        series = tuple((n, (2.0, 1.5, 1.0, 0.7, 0.5)) for n in names)
        output = "" if names else "损失 0.5\n"
    elif isinstance(step, Parsons) and step.run is not None:
        series = ((step.run.series, (4.0, 3.0, 2.2, 1.6)),)
    return SnippetResult(ok=True, shown="tensor([4., 6.])", series=series, output=output,
                         error=None, duration_ms=5)


def states(lesson: Lesson, index: int) -> Iterator[tuple[str, WalkState]]:
    """The states of step `index` worth drawing, each named."""
    step = lesson.steps[index]
    state = begin(lesson, index)
    yield "open", state
    yield "help", handle(lesson, state, "help")[0]
    yield "notice", handle(lesson, state, Unknown("zz"))[0]
    if isinstance(step, Quiz):
        for number, question in enumerate(step.questions):
            state = handle(lesson, state, Choose(len(question.choices) - 1))[0]
            yield f"question {number + 1}", state
            state = handle(lesson, state, "submit")[0]
            yield f"feedback {number + 1}", state
            state = handle(lesson, state, "next")[0]
        yield "score", state
    elif isinstance(step, Predict):
        state = handle(lesson, state, Choose(0))[0]
        yield "chosen", state
        state = handle(lesson, state, "submit")[0]
        yield "running", state
        yield "shown", handle(lesson, state, SnippetDone(step.id, result_for(step)))[0]
    elif isinstance(step, Parsons):
        state = handle(lesson, state, "grab")[0]
        yield "grabbed", state
        state = handle(lesson, state, "down")[0]
        state = handle(lesson, state, "submit")[0]
        yield "graded", state
        from gradtutor.walk.events import Order

        right = [view_as(state, ParsonsView).order.index(i) + 1 for i in step.solution_order]
        state = handle(lesson, state, Order(tuple(right)))[0]
        yield "passed", state
        yield "ran", handle(lesson, state, SnippetDone(step.id, result_for(step)))[0]
    elif isinstance(step, Demo):
        yield "ran", handle(lesson, state, SnippetDone(step.id, result_for(step)))[0]
    elif isinstance(step, Exercise):
        for n in range(len(step.hints)):
            state = handle(lesson, state, "hint")[0]
            yield f"hint {n + 1}", state
        state = handle(lesson, state, "solution")[0]
        yield "confirming", state
        yield "solution", handle(lesson, state, "yes")[0]


def screens(lesson: Lesson, width: int, plain: bool,
            keys: bool = True) -> Iterator[tuple[str, list[str]]]:
    look = Look(plain, zh())
    for index in range(len(lesson.steps)):
        for name, state in states(lesson, index):
            where = f"step {index + 1} ({lesson.steps[index].id}) {name}"
            yield where, render(screen(lesson, state, width, keys, look, Path("/tmp/工作区")),
                                width)
