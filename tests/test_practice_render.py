"""The predict, Parsons and demo bodies, and the loss chart, rendered into fixed-width consoles
and compared as text: before and after an answer, while code runs, when it fails."""

from __future__ import annotations

import io
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from narrowing import step_as
from rich.console import Console

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.parsons import grade
from gradtutor.i18n import translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import (
    Chart,
    Choice,
    Demo,
    Lesson,
    Parsons,
    ParsonsLine,
    ParsonsRun,
    Predict,
)
from gradtutor.lessons.parsons import assembled, initial_order
from gradtutor.ui.chart import line_chart
from gradtutor.ui.practice import demo_body, parsons_body, predict_body
from gradtutor.ui.render import Look
from gradtutor.walk.parsons import OrderGrade, graded
from gradtutor.walk.predict import judge

if TYPE_CHECKING:
    from conftest import Cli

PLAIN, FANCY = Look(plain=True), Look(plain=False)


def graded_order(step: Parsons, order: tuple[str, ...]) -> OrderGrade:
    """`order` graded, as the walkthrough hands the grade to the screen."""
    return graded(step, grade(step, order))
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Result:
    """Stands in for gradtutor.checking.snippet.SnippetResult: the same fields."""

    ok: bool = True
    shown: str | None = None
    series: tuple[tuple[str, tuple[float, ...]], ...] = ()
    output: str = ""
    error: str | None = None
    duration_ms: int = 5


def text(renderable: object, width: int = 60) -> str:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=False, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def coloured(renderable: object, width: int = 60) -> str:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=True,
                      color_system="standard")
    console.print(renderable)
    return buffer.getvalue()


PREDICT = Predict(
    "predict", "twice", "Twice", "What is `w.grad` now?",
    "import torch\nw = torch.ones(1, requires_grad=True)\n(3 * w).sum().backward()\n"
    "(3 * w).sum().backward()\n", "w.grad",
    (Choice("tensor([3.])", "One pass gives 3; the second adds to it."),
     Choice("tensor([6.])", "Each pass adds 3 into `.grad`.")), "b")
LOOP = Parsons("parsons", "order-it", "Order", "Put the step in order.", (
    ParsonsLine("zero", "opt.zero_grad()", "it clears the old gradients."),
    ParsonsLine("loss", "loss = model(x).pow(2).mean()", "the loss comes from the forward pass."),
    ParsonsLine("backward", "loss.backward()",
                "backward needs the loss, and clearing must come first.", ("zero", "loss")),
    ParsonsLine("step", "opt.step()", "step uses the gradient backward stored.", ("backward",))),
    run=ParsonsRun("import torch\n", "loss.item()", "losses", 12))
DEMO = Demo("demo", "bug", "Bug", "Two runs of the **same** model.", "with_zeroing = [3.0, 2.0]\n",
            Chart(("with_zeroing", "without_zeroing"), "Loss per step"))
WITH = (3.0, 2.4, 1.9, 1.5, 1.2, 1.0, 0.8, 0.6)
WITHOUT = (3.0, 2.4, 1.5, 0.6, 0.1, 0.4, 1.3, 2.2)
CODE_PLAIN = """\
What is `w.grad` now?

    import torch
    w = torch.ones(1, requires_grad=True)
    (3 * w).sum().backward()
    (3 * w).sum().backward()

"""


# --- predict ----------------------------------------------------------------------------------


def test_predict_before_an_answer_shows_the_choices() -> None:
    assert text(predict_body(PREDICT, None, None, PLAIN)) == CODE_PLAIN + """\
  1) tensor([3.])
  2) tensor([6.])"""


def test_a_wrong_prediction_beside_the_real_value_with_both_whys() -> None:
    shown = Result(shown="tensor([6.])")
    assert text(predict_body(PREDICT, judge(PREDICT, 0), shown, PLAIN)) == CODE_PLAIN + """\
[X] Not quite.

  You predicted  1) tensor([3.])
  w.grad is      tensor([6.])

  One pass gives 3; the second adds to it.

  The answer is 2) tensor([6.]): Each pass adds 3 into
  `.grad`."""


def test_a_prediction_while_the_snippet_runs_waits_for_its_value_before_its_verdict() -> None:
    assert text(predict_body(PREDICT, judge(PREDICT, 1), None, FANCY, running=True)) == """\
What is w.grad now?

╭───────────────────────────────────────╮
│ import torch                          │
│ w = torch.ones(1, requires_grad=True) │
│ (3 * w).sum().backward()              │
│ (3 * w).sum().backward()              │
╰───────────────────────────────────────╯

  You predicted  2) tensor([6.])
  w.grad is      running ..."""
    # a snippet that could not run at all: the key still decides, and says so
    assert "✓ Right." in text(predict_body(PREDICT, judge(PREDICT, 1), None, FANCY))


def test_a_snippet_that_failed_shows_its_error_line() -> None:
    result = Result(ok=False, error="NameError: name 'w' is not defined")
    assert text(predict_body(PREDICT, judge(PREDICT, 1), result, PLAIN)).endswith("""\
  You predicted  2) tensor([6.])
  w.grad is      the snippet failed: NameError: name 'w' is
                 not defined

  Each pass adds 3 into `.grad`.""")


def test_a_shown_value_cannot_drive_the_terminal() -> None:
    shown = text(predict_body(PREDICT, judge(PREDICT, 1), Result(shown="tensor\x1b[2J([6.])"),
                              PLAIN))
    assert "\x1b" not in shown and "tensor\\x1b[2J([6.])" in shown


# --- parsons ----------------------------------------------------------------------------------


def test_parsons_lines_in_the_starting_order_with_a_grabbed_line() -> None:
    assert initial_order(LOOP) == ("step", "backward", "zero", "loss")
    assert text(parsons_body(LOOP, initial_order(LOOP), 2, True, None, None, PLAIN)) == """\
Put the step in order.

  1. opt.step()
  2. loss.backward()
> 3. opt.zero_grad()  (moving)
  4. loss = model(x).pow(2).mean()"""


def test_parsons_cursor_in_the_fancy_look() -> None:
    assert text(parsons_body(LOOP, initial_order(LOOP), 0, False, None, None, FANCY)) == """\
Put the step in order.

❯ 1. opt.step()
  2. loss.backward()
  3. opt.zero_grad()
  4. loss = model(x).pow(2).mean()"""


def test_a_wrong_order_marks_its_first_line_out_of_place_and_says_why() -> None:
    order = ("loss", "backward", "zero", "step")
    assert text(parsons_body(LOOP, order, 2, False, graded_order(LOOP, order), None, PLAIN)) == """\
Put the step in order.

  1. loss = model(x).pow(2).mean()
  2. loss.backward()  [X] out of place
> 3. opt.zero_grad()
  4. opt.step()

[X] Not yet: You put `loss.backward()` before
`opt.zero_grad()`: backward needs the loss, and clearing
must come first."""  # no hint line: hints only when asked


RIGHT_HEAD = """\
Put the step in order.

  1. opt.zero_grad()
  2. loss = model(x).pow(2).mean()
  3. loss.backward()
> 4. opt.step()

[OK] Right: every line comes after the lines it needs.

Your step ran 12 times; `losses` after each:
"""


def test_a_right_order_runs_and_shows_each_value() -> None:
    order = LOOP.solution_order
    losses = tuple(round(3.0 * 0.7 ** i, 4) for i in range(12))
    run = Result(series=(("losses", losses),))
    assert text(parsons_body(LOOP, order, 3, False, graded_order(LOOP, order), run, PLAIN)) == (
        RIGHT_HEAD + """\
  3, 2.1, 1.47, 1.03, 0.72, 0.504, 0.353, 0.247, 0.173,
  0.121, 0.0847, 0.0593
  it fell from 3 to 0.0593""")


def test_the_guide_says_what_shows_after_the_ordering_step() -> None:
    readme = (Path(__file__).parent.parent / "docs" / "using.md").read_text(encoding="utf-8")
    bullet = readme.split("- **Order the loop**", 1)[1].split("\n- **", 1)[0]
    # the run shows as in the test above: a line of values and its trend, no chart
    assert "curve" not in bullet and "chart" not in bullet
    assert "its loss after each pass shows as a list of numbers, with whether it fell" in (
        " ".join(bullet.split()))


def test_a_right_order_while_it_runs_and_when_it_fails() -> None:
    order, verdict = LOOP.solution_order, graded_order(LOOP, LOOP.solution_order)
    assert text(parsons_body(LOOP, order, 3, False, verdict, None, PLAIN)) == (
        RIGHT_HEAD + "  running ...")
    failed = Result(ok=False, error="RuntimeError: boom")
    assert text(parsons_body(LOOP, order, 3, False, verdict, failed, PLAIN)) == (
        RIGHT_HEAD + "  the loop failed: RuntimeError: boom")


def test_a_long_run_shows_its_first_and_last_values() -> None:
    order = LOOP.solution_order
    losses = tuple(float(n) for n in range(30, 0, -1))
    shown = text(parsons_body(LOOP, order, 0, False, graded_order(LOOP, order),
                              Result(series=(("losses", losses),)), PLAIN))
    assert shown.endswith("  30, 29, 28, 27, 26, 25, 24, 23, 22, ..., 2, 1\n"
                          "  it fell from 30 to 1")
    fancy = text(parsons_body(LOOP, order, 0, False, graded_order(LOOP, order),
                              Result(series=(("losses", (1.0, math.inf)),)), FANCY))
    assert fancy.endswith("  1, inf\n  from 1 to inf")


# --- demo -------------------------------------------------------------------------------------


def test_a_demo_charts_its_two_curves_on_shared_axes() -> None:
    result = Result(series=(("with_zeroing", WITH), ("without_zeroing", WITHOUT)))
    assert text(demo_body(DEMO, result, 60, PLAIN)) == """\
Two runs of the **same** model.

    with_zeroing = [3.0, 2.0]

Loss per step
loss
  3 +@
    |
    |        @
    |                                                      x
    |               o
1.5 +               x       o
    |                               o              x
    |                                       o      o
    |                       x                              o
    |                                       x
  0 +                               x
    +-------------------------------------------------------
     1                        step                         8
o with zeroing   x without zeroing   @ both"""


def test_a_demo_while_it_runs_and_when_it_fails() -> None:
    assert text(demo_body(DEMO, None, 60, PLAIN)).endswith(
        "    with_zeroing = [3.0, 2.0]\n\nrunning ...")
    failed = Result(ok=False, error="ZeroDivisionError: division by zero")
    assert text(demo_body(DEMO, failed, 60, FANCY)) == """\
Two runs of the same model.

╭───────────────────────────╮
│ with_zeroing = [3.0, 2.0] │
╰───────────────────────────╯

The code failed: ZeroDivisionError: division by zero"""


def test_a_demo_says_which_series_is_missing_and_shows_its_output() -> None:
    shown = text(demo_body(DEMO, Result(series=(("with_zeroing", WITH),), output="done\n"),
                           60, PLAIN))
    assert shown.endswith("o with zeroing\n(the code left no without_zeroing to draw)\n\n"
                          "It printed:\n  done")


def test_a_demo_without_a_chart_shows_what_it_printed_made_harmless() -> None:
    demo = Demo("demo", "m", "M", "Momentum.", "print(1)\n")
    assert text(demo_body(demo, Result(output="1\n\x1b[2J"), 60, PLAIN)) == """\
Momentum.

    print(1)

It printed:
  1
  \\x1b[2J"""
    assert text(demo_body(demo, Result(), 60, PLAIN)).endswith("(it printed nothing)")


# --- the chart --------------------------------------------------------------------------------


def test_values_that_are_not_finite_are_left_out_and_said_so() -> None:
    chart = line_chart([("a", [3.0, math.inf, 1.0, math.nan, -math.inf])], title="T",
                       x_label="step", y_label="loss", width=60, look=PLAIN)
    assert text(chart) == """\
T
loss
  3 +o
    |
    |
    |
    |
1.5 +
    |
    |                           o
    |
    |
  0 +
    +-------------------------------------------------------
     1                        step                         5
o a
a: 3 values not drawn (-inf, inf, nan), the first at step 2"""


def test_a_chart_with_nothing_finite_to_draw() -> None:
    chart = line_chart([("exploded", [math.nan, math.inf]), ("empty", [])], title="T",
                       x_label="step", y_label="loss", width=60, look=FANCY)
    assert text(chart) == """\
T
(no finite values to draw)
exploded: 2 values not drawn (inf, nan), the first at step 1"""
    assert text(line_chart([], title="T", x_label="step", y_label="loss", width=60,
                           look=PLAIN)) == "T\n(no finite values to draw)"


def test_the_largest_finite_values_do_not_overflow_the_scale() -> None:
    chart = text(line_chart([("a", [1e308, -1e308, 0.0]), ("b", [5.0])], title="T",
                            x_label="step", y_label="y", width=60, look=PLAIN))
    rows = chart.splitlines()
    assert rows[2] == " 1e+308 +o"
    assert rows[7] == "      0 +x" + " " * 49 + "o"  # 0 and 5 are both mid-scale here
    assert rows[12] == "-1e+308 +" + " " * 25 + "o"


def test_one_point_and_a_flat_line() -> None:
    chart = text(line_chart([("a", [2.0, 2.0, 2.0])], title="T", x_label="step", y_label="y",
                            width=60, look=PLAIN))
    assert chart.splitlines()[2] == "2 +o" + " " * 27 + "o" + " " * 27 + "o"
    single = text(line_chart([("a", [-1.0])], title="T", x_label="step", y_label="y",
                             width=60, look=PLAIN))
    assert "-1 +o" in single and single.splitlines()[-2].endswith("1")


@pytest.mark.parametrize("width", [60, 61, 73, 80, 99, 100])
@pytest.mark.parametrize("look", [PLAIN, FANCY], ids=["plain", "fancy"])
def test_the_chart_never_runs_wider_than_asked(width: int, look: Look) -> None:
    series = [("with zeroing", [3.4 * 0.9 ** i for i in range(200)]),
              ("without zeroing and a much longer name for the legend to wrap",
               [float(i % 7) if i % 11 else math.nan for i in range(200)]),
              ("third", [1e6, -3.0, math.inf])]
    chart = line_chart(series, title="A title that is long enough to need wrapping at sixty "
                       "columns, to be sure", x_label="step", y_label="loss", width=width,
                       look=look)
    for console_width in (width, 120):  # a wider console does not widen the chart
        shown = text(chart, console_width)
        assert max(len(line) for line in shown.splitlines()) <= width
        assert "step" in shown
    if look.plain:
        assert text(chart, width).isascii()


def test_colour_only_in_the_fancy_look_and_never_the_only_sign() -> None:
    series = [("a", [1.0, 2.0]), ("b", [2.0, 1.0])]
    fancy = coloured(line_chart(series, title="T", x_label="x", y_label="y", width=60,
                                look=FANCY))
    assert "\x1b[32m●" in fancy and "\x1b[31m×" in fancy  # green and red, each its own mark
    buffer = io.StringIO()
    plain = Console(width=60, file=buffer, force_terminal=True, color_system="standard",
                    no_color=True)
    plain.print(line_chart(series, title="T", x_label="x", y_label="y", width=60, look=PLAIN))
    assert "o a   x b" in ANSI.sub("", buffer.getvalue())


# --- the grad lesson's own practice steps -----------------------------------------------------


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("grad")


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_after_a_wrong_prediction_the_answer_never_reads_as_praise(lang: str) -> None:
    # "✗ Not quite." then "The answer is 2) ...: Right." would contradict itself
    lesson = load_course(lang=lang, rules=EXERCISE_RULES).find("grad")
    look = Look(plain=True) if lang == "en" else Look(plain=True, tr=translator(lang))
    predicts = [step for step in lesson.steps if isinstance(step, Predict)]
    assert predicts
    for step in predicts:
        answer = "abcd".index(step.answer)
        for wrong in (i for i in range(len(step.choices)) if i != answer):
            shown = text(predict_body(step, judge(step, wrong), Result(shown="x"), look), width=200)
            assert not re.search(r"\bRight\b|\bCorrect\b|正确|没错", shown), shown


def practice_bodies(lesson: Lesson, width: int, look: Look) -> list[tuple[str, object]]:
    """Every practice body of the lesson in each state, with made-up results."""
    bodies: list[tuple[str, object]] = []
    for step in lesson.steps:
        if isinstance(step, Predict):
            bodies += [(step.id, predict_body(step, None, None, look))]
            bodies += [(step.id, predict_body(step, judge(step, i), Result(shown=choice.text),
                                              look))
                       for i, choice in enumerate(step.choices)]
        elif isinstance(step, Parsons):
            start = initial_order(step)
            solution = step.solution_order
            losses = (("losses", tuple(3.4 * 0.85 ** i for i in range(20))),)
            bodies += [(step.id, parsons_body(step, start, 1, True, None, None, look)),
                       (step.id, parsons_body(step, start, 0, False, graded_order(step, start),
                                              None, look)),
                       (step.id, parsons_body(step, solution, 4, False,
                                              graded_order(step, solution),
                                              Result(series=losses), look))]
        elif isinstance(step, Demo):
            names = step.chart.series if step.chart else ()
            series = tuple((name, tuple(float(i * (k + 1) % 5) for i in range(30)))
                           for k, name in enumerate(names))
            bodies += [(step.id, demo_body(step, None, width, look)),
                       (step.id, demo_body(step, Result(series=series, output="a\nb\n"), width,
                                           look))]
    return bodies


@pytest.mark.parametrize("width", [60, 100])
@pytest.mark.parametrize("look", [PLAIN, FANCY], ids=["plain", "fancy"])
def test_every_practice_step_of_grad_fits_the_width(grad: Lesson, width: int, look: Look) -> None:
    bodies = practice_bodies(grad, width, look)
    assert {step_id for step_id, _ in bodies} == {
        "predict-two-backwards", "predict-zero-grad", "order-the-loop", "hidden-bug-demo",
        "momentum-demo", "dead-relu"}
    for step_id, body in bodies:
        shown = text(body, width)
        assert max(len(line) for line in shown.splitlines()) <= width, step_id


def test_the_hidden_bug_demo_chart_names_both_runs(grad: Lesson) -> None:
    step = step_as(grad, "hidden-bug-demo", Demo)
    series = (("with_zeroing", WITH), ("without_zeroing", WITHOUT))
    shown = text(demo_body(step, Result(series=series), 100, FANCY), 100)
    assert "Loss at each step, same model and data" in shown
    assert "● with zeroing   × without zeroing   ◆ both" in shown


def test_showing_a_predict_or_parsons_body_never_imports_the_chart_or_torch() -> None:
    code = ("import sys\n"
            "from gradtutor.ui import practice\n"
            "from gradtutor.checking import parsons\n"
            "from gradtutor.lessons import parsons as lesson_parsons\n"
            "assert 'gradtutor.ui.chart' not in sys.modules\n"
            "assert not [m for m in sys.modules if m == 'torch' or m.startswith('torch.')]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_parsons_assembled_loop_is_what_the_lesson_runs(grad: Lesson) -> None:
    step = next(s for s in grad.steps if isinstance(s, Parsons))
    assert "for _ in range(20):\n    optimizer.zero_grad()\n" in assembled(
        step, step.solution_order)


# --- gradtutor show -----------------------------------------------------------------------------


def test_show_prints_a_parsons_step_with_its_lines_and_how_to_check_it(cli: Cli) -> None:
    code, out, err = cli("show", "grad", "--step", "order-the-loop", "--plain", width=60)
    assert (code, err) == (0, "")
    out = "\n".join(line.rstrip() for line in out.split("\n"))
    assert out.endswith("""\
  1. optimizer.step()
  2. optimizer.zero_grad()
  3. loss = loss_fn(pred, y)
  4. pred = model(x)
  5. loss.backward()

Try it: write these lines in a working order in
order-the-loop.txt, one per line, and run `gradtutor check
order-the-loop order-the-loop.txt`.

""")


def test_show_never_gives_a_predict_answer_away(cli: Cli) -> None:
    code, out, _ = cli("show", "grad", "--step", "predict-zero-grad", "--plain", width=100)
    assert code == 0
    out = "\n".join(line.rstrip() for line in out.split("\n"))
    assert "  1) tensor([[1., 1.]])\n  2) tensor([[0., 0.]])\n  3) None\n" in out
    assert "Right" not in out and "set_to_none=False" not in out
    assert "In `gradtutor start`, pick an answer; the snippet then runs and shows the value." in out
