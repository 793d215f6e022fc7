"""Keys and sizes in a real terminal (a pseudo-terminal read through pyte): a letter means
the same on every screen, a choice is picked by its number, and a terminal too small for the
tutor says so in one line, then the tutor comes back when the window grows."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from screen_term import Term

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Lesson, Predict, Quiz

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal"),
              pytest.mark.slow]

RIGHT = "\x1b[C"
KEY_SIZES = [(80, 24), (60, 20)]


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(None, rules=EXERCISE_RULES).find("grad")


def counter(lesson: Lesson, index: int) -> str:
    return f"step {index + 1} of {len(lesson.steps)}"


@pytest.mark.parametrize(("columns", "rows"), KEY_SIZES, ids=[f"{c}x{r}" for c, r in KEY_SIZES])
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
