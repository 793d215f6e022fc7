"""Screens rendered into a fixed-width console and compared as text."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from gradtutor.lessons.course import load_course
from gradtutor.lessons.load import load_lesson
from gradtutor.ui import render
from gradtutor.ui.render import Look
from gradtutor.ui.walkthrough import screen
from gradtutor.walk import Choose, begin, handle

FIXTURES = Path(__file__).parent / "fixtures" / "course"
PLAIN, FANCY = Look(plain=True), Look(plain=False)
BOX_DRAWING = re.compile("[\u2500-\u259f]")


def text(renderable, width: int = 60) -> str:
    console = Console(width=width, file=io.StringIO(), force_terminal=False, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


@pytest.fixture(scope="module")
def basics():
    return load_lesson(FIXTURES / "basics.yaml")


@pytest.fixture(scope="module")
def grad():
    return load_course().find("grad")


def test_progress_bar_plain_and_fancy():
    assert str(render.progress_bar(4, 16, 60, PLAIN)) == (
        "[##########------------------------------] step 4 of 16")
    assert str(render.progress_bar(16, 16, 60, FANCY)) == "━" * 40 + " step 16 of 16"


def test_plain_slide_screen(basics):
    assert text(screen(basics, begin(basics, 1), 60, True, PLAIN)) == """\
Gradient basics --------------------------------------------
Asking for gradients
[################------------------------] step 2 of 5

Set `requires_grad=True` to track a tensor.

    import torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    print(x.grad)

Note: The gradient of x*x at 2 is 4.

Right/n/Enter next | Left/b back | ? help | q quit"""


def test_fancy_slide_screen(basics):
    assert text(screen(basics, begin(basics, 1), 60, True, FANCY)) == """\
Gradient basics ────────────────────────────────────────────
Asking for gradients
━━━━━━━━━━━━━━━━──────────────────────── step 2 of 5

Set requires_grad=True to track a tensor.

╭───────────────────────────────────────────╮
│ import torch                              │
│ x = torch.tensor(2.0, requires_grad=True) │
│ y = x * x                                 │
│ y.backward()                              │
│ print(x.grad)                             │
╰───────────────────────────────────────────╯

Note: The gradient of x*x at 2 is 4.

→/n/Enter next · ←/b back · ? help · q quit"""


def test_open_question_marks_the_selection(basics):
    state, _ = handle(basics, begin(basics, 3), Choose(1))
    assert text(screen(basics, state, 60, True, PLAIN)) == """\
Gradient basics --------------------------------------------
Quick check
[################################--------] step 4 of 5

Question 1 of 2 (choose one)

What does `x.grad` hold after `(x * x).backward()` with x =
2?

  ( ) a) 2
  (*) b) 4
  ( ) c) None

a-c choose | Enter submit | Left back | ? help | q quit"""


def test_feedback_names_right_and_wrong_in_words(basics):
    state, _ = handle(basics, begin(basics, 3), Choose(0))
    state, _ = handle(basics, state, "submit")
    assert text(screen(basics, state, 60, False, PLAIN)) == """\
Gradient basics --------------------------------------------
Quick check
[################################--------] step 4 of 5

Question 1 of 2

What does `x.grad` hold after `(x * x).backward()` with x =
2?

[X] Not quite: the answer is b.

  [X] a)  2  (you chose it; wrong)
          That is x itself, not the derivative.
  [OK] b) 4  (correct answer)
          The derivative of x*x is 2x, which is 4 at x = 2.
  - c)    None  (wrong)
          x requires grad, so backward fills in .grad.

Enter next question | b back | ? help | q quit"""


def test_feedback_keeps_the_code_the_question_asked_about():
    quiz = next(s for s in load_course().find("grad").steps if s.kind == "quiz")
    question = next(q for q in quiz.questions if q.code)
    shown = text(render.feedback_body(question, 1, len(quiz.questions), frozenset({0}), PLAIN))
    assert question.code.strip().splitlines()[-1] in shown
    assert shown.index(question.prompt.split()[0]) < shown.index("Not quite")


def test_score_screen(basics):
    quiz = basics.steps[3]
    assert text(render.score_body(quiz, 2, 2, PLAIN)) == "Your score: 2 of 2\n\n[OK] Passed"
    assert text(render.score_body(quiz, 1, 2, FANCY)) == (
        "Your score: 1 of 2\n\n✗ Not passed yet: go back over the slides and try again")


def test_lessons_table_plain(basics):
    from gradtutor.progress import LessonProgress

    table = render.lessons_table((basics,), {"basics": LessonProgress(step="accumulate")}, PLAIN)
    assert text(table) == """\
#  lesson  title            progress     quiz
1  basics  Gradient basics  step 3 of 5     -"""


@pytest.mark.parametrize("width", [60, 100])
@pytest.mark.parametrize("look", [PLAIN, FANCY], ids=["plain", "fancy"])
def test_every_step_of_grad_fits_the_width(grad, width, look):
    for index in range(len(grad.steps)):
        shown = text(screen(grad, begin(grad, index), width, True, look), width=width)
        assert max(len(line) for line in shown.splitlines()) <= width
        assert f"step {index + 1} of {len(grad.steps)}" in shown
        assert grad.steps[index].title in shown
        if look.plain:
            assert not BOX_DRAWING.search(shown), f"box drawing in plain step {index + 1}"


def test_every_quiz_feedback_of_grad_renders_each_explanation(grad):
    index = grad.index_of("quick-check")
    quiz = grad.steps[index]
    state = begin(grad, index)
    for question in quiz.questions:
        state, _ = handle(grad, state, Choose(0))
        state, _ = handle(grad, state, "submit")
        shown = " ".join(text(screen(grad, state, 100, False, PLAIN), width=100).split())
        for choice in question.choices:
            assert " ".join(choice.why.split()) in shown
        state, _ = handle(grad, state, "next")
    assert state.quiz.question == len(quiz.questions)
