"""Screens rendered into a fixed-width console and compared as text."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from narrowing import index_of, step_as, view_as
from rich.console import Console

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.i18n import translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Lesson, Quiz
from gradtutor.lessons.timing import duration
from gradtutor.ui import render
from gradtutor.ui.render import Look
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.events import Choose
from gradtutor.walk.machine import begin, handle
from gradtutor.walk.quiz import QuizResult, QuizView, mark_answer

FIXTURES = Path(__file__).parent / "fixtures" / "course"
PLAIN, FANCY = Look(plain=True), Look(plain=False)
BOX_DRAWING = re.compile("[\u2500-\u259f]")


def text(renderable: object, width: int = 60) -> str:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=False, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


@pytest.fixture(scope="module")
def basics() -> Lesson:
    return load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES)


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("grad")


# A lesson file's line breaks inside a paragraph are soft, as in Markdown (prior review P10):
# the plain look must not keep them and then wrap each line again.
SOFT_BROKEN = """\
The parameters' `.grad` may still hold gradients from before the
call. Take one optimizer step per batch, each using only that batch's
gradient, and return the batch losses (each one computed before its
step) as a list of floats.

- `loss_fn`: a loss, called as `loss_fn(prediction, target)`, that
  averages over the rows of its batch;
- `batches`: a list of `(x, y)` pairs.

```python
loss.backward()
```
"""


def test_plain_markdown_reflows_a_paragraph_at_60_columns() -> None:
    assert text(render.markdown(SOFT_BROKEN, PLAIN), 60) == (
        "The parameters' `.grad` may still hold gradients from before\n"
        "the call. Take one optimizer step per batch, each using only\n"
        "that batch's gradient, and return the batch losses (each one\n"
        "computed before its step) as a list of floats.\n"
        "\n"
        "- `loss_fn`: a loss, called as `loss_fn(prediction,\n"
        "  target)`, that averages over the rows of its batch;\n"
        "- `batches`: a list of `(x, y)` pairs.\n"
        "\n"
        "```python\n"
        "loss.backward()\n"
        "```")
    # the fancy look joined the lines already: both break the paragraph at the same words
    fancy = text(render.markdown(SOFT_BROKEN.replace("`", ""), FANCY), 60).splitlines()
    plain = text(render.markdown(SOFT_BROKEN.replace("`", ""), PLAIN), 60).splitlines()
    assert fancy[:4] == plain[:4]


def test_plain_markdown_keeps_its_english_mark_at_the_end() -> None:
    from gradtutor.i18n import Untranslated

    shown = text(render.markdown(Untranslated("One line\nand its rest."), PLAIN), 60)
    assert shown == "One line and its rest. [EN]"
    shown = text(render.markdown(Untranslated("Code:\n\n```\nx = 1\n```"), PLAIN), 60)
    assert shown == "Code:\n\n```\nx = 1\n```\n[EN]"


def test_progress_bar_plain_and_fancy() -> None:
    assert str(render.progress_bar(4, 16, 60, PLAIN)) == (
        "[##########------------------------------] step 4 of 16")
    assert str(render.progress_bar(16, 16, 60, FANCY)) == "━" * 40 + " step 16 of 16"


def test_plain_slide_screen(basics: Lesson) -> None:
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

Right/n/Enter next | Left/b back | a ask | ? help | q quit"""


def test_fancy_slide_screen(basics: Lesson) -> None:
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

→/n/Enter next · ←/b back · a ask · ? help · q quit"""


def test_open_question_marks_the_selection(basics: Lesson) -> None:
    state, _ = handle(basics, begin(basics, 3), Choose(1))
    assert text(screen(basics, state, 60, True, PLAIN)) == """\
Gradient basics --------------------------------------------
Quick check
[################################--------] step 4 of 5

Question 1 of 2 (choose one)

What does `x.grad` hold after `(x * x).backward()` with x =
2?

  ( ) 1) 2
  (*) 2) 4
  ( ) 3) None

1-3 choose | Enter submit | Left back | ? help | q quit"""


def test_a_question_with_several_answers_says_it_scores_all_or_nothing(basics: Lesson) -> None:
    quiz = step_as(basics, 3, Quiz)
    several = next(q for q in quiz.questions if q.multiple)
    header = text(render.question_body(several, 2, 2, frozenset(), PLAIN)).splitlines()[0]
    assert header == "Question 2 of 2 (choose all that apply; all or nothing)"
    zh = Look(plain=True, tr=translator("zh-CN"))
    header = text(render.question_body(several, 2, 2, frozenset(), zh)).splitlines()[0]
    assert header == "第 2 题，共 2 题（多选：选出所有正确的项，全对才得分）"


def test_feedback_names_right_and_wrong_in_words(basics: Lesson) -> None:
    state, _ = handle(basics, begin(basics, 3), Choose(0))
    state, _ = handle(basics, state, "submit")
    assert text(screen(basics, state, 60, False, PLAIN)) == """\
Gradient basics --------------------------------------------
Quick check
[################################--------] step 4 of 5

Question 1 of 2

What does `x.grad` hold after `(x * x).backward()` with x =
2?

[X] Not quite: the answer is choice 2.

  [X] 1) 2  (you chose it; wrong)
         That is x itself, not the derivative.
  [!] 2) 4  (correct answer; you missed it)
         The derivative of x*x is 2x, which is 4 at x = 2.
  - 3)   None  (wrong)
         x requires grad, so backward fills in .grad.

Enter next question | b back | ask | ? help | q quit"""


def test_feedback_keeps_the_code_the_question_asked_about() -> None:
    quiz, question = next((s, q) for lesson in load_course(rules=EXERCISE_RULES).lessons
                          for s in lesson.steps if isinstance(s, Quiz)
                          for q in s.questions if q.code)
    shown = text(render.feedback_body(question, 1, len(quiz.questions),
                                      mark_answer(question, frozenset({0})), PLAIN))
    assert question.code is not None and question.code.strip().splitlines()[-1] in shown
    assert shown.index(question.prompt.split()[0]) < shown.index("Not quite")


def test_score_screen(basics: Lesson) -> None:
    quiz = step_as(basics, 3, Quiz)
    passed = QuizResult(2, 2, passed=True, missed=())
    assert text(render.score_body(quiz, passed, "basics", PLAIN)) == (
        "Your score: 2 of 2\n\n[OK] Passed")


def test_score_screen_names_the_questions_missed_and_how_to_retake(basics: Lesson) -> None:
    quiz = step_as(basics, 3, Quiz)
    failed = QuizResult(1, 2, passed=False, missed=(2,))
    assert text(render.score_body(quiz, failed, "basics", FANCY)) == """\
Your score: 1 of 2

✗ Not passed yet: go back over the slides and try again

Missed:
  ✗ Question 2: Which statements are true?

To take it again: run gradtutor quiz basics, or come back to
this step later."""


def test_the_score_screen_shows_the_verdict_it_is_given(basics: Lesson) -> None:
    # the renderer reads the decision: a quiz whose pass mark 1 of 2 meets says passed
    quiz = step_as(basics, 3, Quiz)
    shown = text(render.score_body(quiz, QuizResult(1, 2, passed=True, missed=(1,)), "basics",
                                   PLAIN))
    assert "[OK] Passed" in shown and "Question 1: What does" in shown


def test_feedback_marks_a_right_answer_not_chosen_apart_from_one_chosen(basics: Lesson) -> None:
    state, _ = handle(basics, begin(basics, 3), Choose(1))
    state, _ = handle(basics, state, "submit")
    state, _ = handle(basics, state, "next")
    state, _ = handle(basics, state, Choose(0))
    state, _ = handle(basics, state, "submit")  # 1, not 3
    for look, ok, missed in ((PLAIN, "[OK]", "[!]"), (FANCY, "✓", "!")):
        shown = text(screen(basics, state, 80, False, look), width=80)
        assert f"{ok} 1) backward adds to .grad  (you chose it; correct answer)" in shown
        assert f"{missed} 3)" in shown and "(correct answer; you missed it)" in shown
        assert f"{ok} 3)" not in shown
        assert "Not quite: the answer is choices 1, 3." in " ".join(shown.split())


@pytest.mark.parametrize("width", [60, 80])
def test_a_lesson_s_progress_reads_line_by_line_at_any_width(width: int) -> None:
    from gradtutor import progress as prog

    second = load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES)
    state = prog.record_check(prog.visit(prog.Progress(), "second", "square-grad", "t"),
                              "second", "square-grad", True, "t").of("second")
    shown = text(render.lesson_progress(second, state, PLAIN), width=width)
    assert shown.splitlines() == [
        "second  Practising gradients",
        f"  step {index_of(second, 'square-grad') + 1} of {len(second.steps)}; 1 of "
        f"{len(second.steps)} steps seen",
        f"  about {duration(second).core} minutes",
        "  exercises solved: 1 of 1",
    ]


def test_a_lesson_s_progress_names_the_quiz_score_and_whether_it_passed(basics: Lesson) -> None:
    from gradtutor import progress as prog

    p = prog.finish(prog.visit(prog.Progress(), "basics", "check", "t"), "basics", "t")
    not_taken = text(render.lesson_progress(basics, p.of("basics"), PLAIN), width=60)
    assert not_taken.splitlines()[1:] == [
        "  [OK] finished; 1 of 5 steps seen",
        "  about 5 minutes",
        "  quiz: not taken yet",
        "    take it: `gradtutor quiz basics`"]
    p = prog.record_quiz(p, "basics", "check", 1, 2, "t")
    failed = text(render.lesson_progress(basics, p.of("basics"), PLAIN), width=60)
    assert failed.splitlines()[3:] == [
        "  [X] quiz: best score 1 of 2, not passed yet",
        "    take it again: `gradtutor quiz basics`"]
    p = prog.record_quiz(p, "basics", "check", 2, 2, "t")
    passed = text(render.lesson_progress(basics, p.of("basics"), FANCY), width=60)
    assert passed.splitlines()[3:] == ["  ✓ quiz: best score 2 of 2, passed"]


def test_lessons_table_plain(basics: Lesson) -> None:
    from gradtutor.progress import LessonProgress

    table = render.lessons_table((basics,), {"basics": LessonProgress(step="accumulate")}, PLAIN)
    assert text(table) == """\
#  lesson  title            progress     quiz  minutes
1  basics  Gradient basics  step 3 of 5     -        5"""


@pytest.mark.parametrize("width", [60, 100])
@pytest.mark.parametrize("look", [PLAIN, FANCY], ids=["plain", "fancy"])
def test_every_step_of_grad_fits_the_width(grad: Lesson, width: int, look: Look) -> None:
    for index in range(len(grad.steps)):
        shown = text(screen(grad, begin(grad, index), width, True, look), width=width)
        assert max(len(line) for line in shown.splitlines()) <= width
        assert f"step {index + 1} of {len(grad.steps)}" in shown
        assert grad.steps[index].title in shown
        if look.plain:
            assert not BOX_DRAWING.search(shown), f"box drawing in plain step {index + 1}"


def test_every_quiz_feedback_of_grad_renders_each_explanation(grad: Lesson) -> None:
    index = index_of(grad, "quick-check")
    quiz = step_as(grad, index, Quiz)
    state = begin(grad, index)
    for question in quiz.questions:
        state, _ = handle(grad, state, Choose(0))
        state, _ = handle(grad, state, "submit")
        shown = " ".join(text(screen(grad, state, 100, False, PLAIN), width=100).split())
        for choice in question.choices:
            assert " ".join(choice.why.split()) in shown
        state, _ = handle(grad, state, "next")
    assert view_as(state, QuizView).question == len(quiz.questions)
