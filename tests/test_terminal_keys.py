"""Keys and sizes in a real terminal (a pseudo-terminal read through pyte): a letter means
the same on every screen, a choice is picked by its number, and a terminal too small for the
tutor says so in one line, then the tutor comes back when the window grows."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from screen_term import Term

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Lesson, Predict, Quiz

needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")

RIGHT = "\x1b[C"
KEY_SIZES = [(80, 24), (60, 20)]


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(None, rules=EXERCISE_RULES).find("grad")


def counter(lesson: Lesson, index: int) -> str:
    return f"step {index + 1} of {len(lesson.steps)}"


@pytest.mark.parametrize(("columns", "rows"), KEY_SIZES, ids=[f"{c}x{r}" for c, r in KEY_SIZES])
@needs_pty
@pytest.mark.slow
def test_b_goes_back_on_a_prediction_and_a_question_where_numbers_choose(
    grad: Lesson, tmp_path: Path, columns: int, rows: int,
) -> None:
    """`b`, back on every slide, goes back on a prediction and a quiz question too (it once
    picked choice b there); the legend names the number keys that choose."""
    predict = next(i for i, s in enumerate(grad.steps) if isinstance(s, Predict))
    quiz = next(i for i, s in enumerate(grad.steps) if isinstance(s, Quiz))
    step = grad.steps[predict]
    assert isinstance(step, Predict)
    term = Term(["start", "grad"], tmp_path, columns, rows)
    term.shows(counter(grad, 0))
    term.send(RIGHT * predict)
    term.shows(counter(grad, predict), f"1-{len(step.choices)} choose")
    term.send("b")
    term.shows(counter(grad, predict - 1))
    term.send(RIGHT)
    term.shows(counter(grad, predict))
    term.send("2")
    term.shows("Your prediction: 2)")
    term.send("b")  # a choice made and not submitted: b still goes back
    term.shows(counter(grad, predict - 1))
    term.send(RIGHT * 2)
    term.shows(counter(grad, predict + 1))
    term.send(RIGHT * (quiz - predict - 1))
    question = grad.steps[quiz]
    assert isinstance(question, Quiz)
    term.shows("Question 1 of", f"1-{len(question.questions[0].choices)} choose")
    term.send("b")
    term.shows(counter(grad, quiz - 1))
    term.send("q")
    assert term.end() == 0
    assert not re.search(r"Your prediction: \S+\)\s.*\(Enter submits it\)\s*$",
                         "\n".join(term.lines))


def _asks_for_a_larger_window(size: str) -> Callable[[list[str]], bool]:
    def ok(lines: list[str]) -> bool:
        text = " ".join(" ".join(lines).split())
        return (f"Make the window at least 60x20 (it is {size}); q quits." in text
                and "step" not in text)  # nothing of the broken layout
    return ok


@needs_pty
@pytest.mark.slow
def test_a_window_under_60x20_says_the_size_it_needs_and_the_tutor_comes_back_when_it_grows(
    grad: Lesson, tmp_path: Path,
) -> None:
    term = Term(["start", "grad"], tmp_path, 40, 10)
    term.wait("the size needed", _asks_for_a_larger_window("40x10"))
    term.resize(80, 24)
    term.shows(grad.steps[0].title, counter(grad, 0))
    term.send(RIGHT)
    term.shows(counter(grad, 1))
    term.resize(50, 15)  # a live resize below the size
    term.wait("the size needed", _asks_for_a_larger_window("50x15"))
    term.resize(60, 20)
    term.shows(counter(grad, 1))
    term.resize(30, 6)
    term.wait("the size needed", _asks_for_a_larger_window("30x6"))
    term.send("q")  # quitting works at any size
    assert term.end() == 0


def test_keys_pressed_on_a_window_too_small_wait_for_it_to_grow_but_q_quits(
    grad: Lesson,
) -> None:
    """Pressed blind, a key would act on a screen the learner cannot see: it does nothing
    until the window is large enough again; quitting works at any size."""
    from rich.console import Console

    from gradtutor.ui.fullscreen import FullScreen
    from gradtutor.ui.render import Look
    from gradtutor.ui.terminal import Io
    from gradtutor.walk.machine import begin

    size = [(40, 10)]
    pressed = iter(["right", "n", "q"])

    def read_key(timeout: float | None) -> str | None:
        return next(pressed)

    console = Console(file=io.StringIO(), width=40, force_terminal=True)
    full = FullScreen(console, lambda: size[0], Look(True))
    small = Io(console, keys=True, stdin=io.StringIO(), read_key=read_key, full=full)
    assert small.next_event(grad, begin(grad, 0)) == "quit"
    pressed = iter(["right"])
    size[0] = (60, 20)
    assert small.next_event(grad, begin(grad, 0)) == "next"
