"""Grading a Parsons step as a dependency graph: every order that respects the `after`
constraints passes, and any other names its first line out of place, with why."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.parsons import grade, grade_file, grade_text, order_from_text
from gradtutor.checking.verdict import to_json
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Parsons, ParsonsLine, ParsonsRun
from gradtutor.lessons.parsons import (
    assembled,
    first_out_of_place,
    initial_order,
    is_correct,
    parsons_steps,
    run_series,
)

if TYPE_CHECKING:
    from conftest import Cli

COURSE = ["--lessons", str(Path(__file__).parent / "fixtures" / "course")]
LOOP_IDS = ("zero", "forward", "loss", "backward", "step")
RIGHT = "optimizer.zero_grad()\npred = model(x)\nloss = loss_fn(pred, y)\nloss.backward()\n" \
        "optimizer.step()\n"


@pytest.fixture(scope="module")
def loop() -> Parsons:
    step = parsons_steps(load_course(rules=EXERCISE_RULES).lessons)["order-the-loop"]
    assert tuple(line.id for line in step.lines) == LOOP_IDS
    return step


def valid_by_hand(order: tuple[str, ...]) -> bool:
    """The rules of a training step, written out independently of the lesson's `after`s:
    forward, loss, backward, step in that order, and zero_grad anywhere before backward."""
    at = {line_id: n for n, line_id in enumerate(order)}
    return (at["forward"] < at["loss"] < at["backward"] < at["step"]
            and at["zero"] < at["backward"])


def first_wrong_by_hand(order: tuple[str, ...]) -> str:
    """The first line (in the learner's order) with a line it needs still below it."""
    needs = {"loss": {"forward"}, "backward": {"loss", "zero"}, "step": {"backward"}}
    for n, line_id in enumerate(order):
        if needs.get(line_id, set()) & set(order[n + 1:]):
            return line_id
    raise AssertionError("a valid order has no wrong line")


ALL_ORDERS = list(itertools.permutations(LOOP_IDS))


def simulate(order: tuple[str, ...], leftovers: bool = True, passes: int = 3) -> list[Any]:
    """What each pass's step() updated with when `order` runs as the body of a loop, as the
    step's prompt describes it: `.grad` holds leftovers ("L") when the loop starts. Gradients
    are sorted tuples of labels, "g1" being batch 1's; a pass that cannot run (a name not
    yet made) stops the loop with "NameError"."""
    grad: list[str] = ["L"] if leftovers else []
    made: dict[str, int] = {}  # pred / loss -> the pass that made it
    used: list[Any] = []
    for k in range(1, passes + 1):
        for line_id in order:
            if line_id == "zero":
                grad = []
            elif line_id == "forward":
                made["pred"] = k
            elif line_id in ("loss", "backward"):
                needs = "pred" if line_id == "loss" else "loss"
                if needs not in made:
                    return [*used, "NameError"]
                if line_id == "loss":
                    made["loss"] = made["pred"]
                else:
                    grad = [*grad, f"g{made['loss']}"]
            else:
                used.append(tuple(sorted(grad)))
    return used


def trains_on_its_own_batch(order: tuple[str, ...], leftovers: bool = True) -> bool:
    return simulate(order, leftovers) == [("g1",), ("g2",), ("g3",)]


def test_the_right_orders_are_those_that_step_on_their_own_batch_from_leftovers() -> None:
    for order in ALL_ORDERS:
        assert valid_by_hand(order) == trains_on_its_own_batch(order), order
    # zero_grad last, as PyTorch's tutorials have written it, trains right only from an
    # empty .grad: the prompt says this loop starts with leftovers
    zero_last = ("forward", "loss", "backward", "step", "zero")
    assert trains_on_its_own_batch(zero_last, leftovers=False)
    assert simulate(zero_last) == [("L", "g1"), ("g2",), ("g3",)]


def test_the_prompt_says_grad_holds_leftovers_when_the_loop_starts(loop: Parsons) -> None:
    prompt = " ".join(loop.prompt.split())
    assert "`.grad` already holds leftover gradients when the loop starts" in prompt
    assert "clearing only at the end of each pass (fine when `.grad` starts empty)" in prompt


def test_there_are_three_right_orders_zero_grad_first_second_or_third() -> None:
    right = [order for order in ALL_ORDERS if valid_by_hand(order)]
    assert right == [("zero", "forward", "loss", "backward", "step"),
                     ("forward", "zero", "loss", "backward", "step"),
                     ("forward", "loss", "zero", "backward", "step")]


@pytest.mark.parametrize("order", ALL_ORDERS, ids="-".join)
def test_every_order_of_the_loop_is_graded_by_its_constraints(loop: Parsons,
                                                              order: tuple[str, ...]) -> None:
    verdict = grade(loop, order)
    assert [c.name for c in verdict.checks] == ["lines", "order"]
    assert verdict.checks[0].status == "pass"
    if valid_by_hand(order):
        assert verdict.passed and verdict.status == "pass"
        assert verdict.checks[1].message == "every line comes after the lines it needs"
        assert "out_of_place" not in verdict.extra
    else:
        wrong = first_wrong_by_hand(order)
        assert (verdict.status, verdict.checks[1].status) == ("fail", "fail")
        assert verdict.extra["out_of_place"] == wrong
        code = loop.line(wrong).code
        assert verdict.checks[1].message.startswith(f"You put `{code}` before `")
        assert verdict.checks[1].message.endswith(" ".join(loop.line(wrong).why.split()))
        evidence = verdict.checks[1].evidence
        assert evidence is not None
        rows = evidence.rows
        assert [row[2] for row in rows] == ["out of place" if i == wrong else "" for i in order]


BACKWARD_WHY = ("backward() adds this batch's gradient to what .grad holds, so the loss and a "
                "cleared .grad must come first. Clearing between backward() and step() leaves "
                "step() no gradient; clearing only after step() lets the first pass step with "
                "the leftovers.")


def test_the_message_names_the_line_and_every_line_it_needs_that_is_below_it(loop: Parsons) -> None:
    verdict = grade(loop, ("backward", "zero", "forward", "loss", "step"))
    order = verdict.checks[1]
    assert order.message == (
        "You put `loss.backward()` before `optimizer.zero_grad()` and `loss = loss_fn(pred, y)`: "
        + BACKWARD_WHY)
    assert order.help == ("`loss.backward()` must come after `optimizer.zero_grad()` and "
                          "`loss = loss_fn(pred, y)`")
    verdict = grade(loop, ("forward", "loss", "backward", "zero", "step"))
    assert verdict.checks[1].message == (
        "You put `loss.backward()` before `optimizer.zero_grad()`: " + BACKWARD_WHY)
    verdict = grade(loop, ("zero", "loss", "forward", "backward", "step"))
    assert verdict.checks[1].message == (
        "You put `loss = loss_fn(pred, y)` before `pred = model(x)`: the loss compares the "
        "prediction with y, so the forward pass must make pred first.")


@pytest.mark.parametrize("order", [o for o in ALL_ORDERS if not valid_by_hand(o)],
                         ids="-".join)
def test_each_rejected_order_is_told_what_its_loop_really_does(loop: Parsons,
                                                              order: tuple[str, ...]) -> None:
    """The reason given is true of this order, run as a loop from leftover gradients."""
    message = grade(loop, order).checks[1].message
    wrong = first_wrong_by_hand(order)
    ran = simulate(order)
    at = {line_id: n for n, line_id in enumerate(order)}
    if wrong == "loss":  # the loss would use no prediction, or the last pass's
        assert ran[-1] == "NameError" or ran[0] != ("g1",)
        assert message.endswith("so the forward pass must make pred first.")
    elif wrong == "step":  # step() before backward() in the pass: not this batch's gradient
        assert all(used != (f"g{k}",) for k, used in enumerate(ran, start=1))
        assert message.endswith("before backward() there is none from this batch.")
    else:
        assert wrong == "backward"
        assert message.endswith(BACKWARD_WHY)
        if at["loss"] > at["backward"]:  # backward() runs on no loss, or on the last pass's
            assert ran[0] == "NameError" or ran[1] != ("g2",)
        elif at["backward"] < at["zero"] < at["step"]:
            assert ran[0] == ()  # "leaves step() no gradient"
        else:
            assert at["zero"] > at["step"]
            assert ran[0] == ("L", "g1")  # "lets the first pass step with the leftovers"
            assert ran[1:] == [("g2",), ("g3",)]
    assert "wipes" not in message


def test_missing_duplicate_and_unknown_lines(loop: Parsons) -> None:
    verdict = grade(loop, ("zero", "forward", "forward", "nope", "step"))
    lines, order = verdict.checks
    assert (verdict.status, lines.status, order.status) == ("fail", "fail", "skip")
    assert lines.message == ("'nope' is not one of the lines; `pred = model(x)` is there 2 "
                             "times; `loss = loss_fn(pred, y)` is missing; `loss.backward()` "
                             "is missing")
    assert lines.help == "use each of the 5 lines exactly once"
    assert order.message == "not judged until every line is there exactly once"
    assert grade(loop, ()).checks[0].message == "your answer has none of the 5 lines"
    assert grade(loop, LOOP_IDS[:4]).checks[0].message == "`optimizer.step()` is missing"


def test_the_verdict_as_json_names_its_checks(loop: Parsons) -> None:
    out = to_json(grade(loop, ("zero", "forward", "loss", "step", "backward")))
    assert (out["exercise"], out["passed"], out["status"]) == ("order-the-loop", False, "fail")
    assert [c["name"] for c in out["checks"]] == ["lines", "order"]
    assert out["checks"][1]["evidence"]["columns"] == ["#", "your order", ""]
    assert out["checks"][1]["evidence"]["rows"][3] == ["4", "optimizer.step()", "out of place"]


# --- the starting order ---------------------------------------------------------------------


def test_the_starting_order_is_fixed_per_step_and_never_right(loop: Parsons) -> None:
    start = initial_order(loop)
    assert start == initial_order(loop)
    assert sorted(start) == sorted(LOOP_IDS)
    assert not valid_by_hand(start)


def small(lines: list[tuple[str, tuple[str, ...]]], step_id: str = "p") -> Parsons:
    return Parsons("parsons", step_id, "T", "P",
                   tuple(ParsonsLine(i, f"c_{i}()", "why", after) for i, after in lines))


@pytest.mark.parametrize("step_id", [f"step-{n}" for n in range(40)])
def test_starting_orders_are_wrong_even_when_few_orders_are(step_id: str) -> None:
    # two lines, one constraint: exactly one of the two orders is wrong
    step = small([("a", ()), ("b", ("a",))], step_id)
    assert initial_order(step) == ("b", "a")
    # many free lines and one constraint: most shuffles are right, the start never is
    step = small([(f"l{n}", ()) for n in range(6)] + [("last", ("l0",))], step_id)
    start = initial_order(step)
    assert first_out_of_place(step, start) is not None and len(start) == 7


def test_different_steps_start_differently() -> None:
    starts = {initial_order(small([(f"l{n}", ()) for n in range(5)] + [("z", ("l0",))], f"s{k}"))
              for k in range(10)}
    assert len(starts) > 1


# --- answers written in a file --------------------------------------------------------------


def test_order_from_text_ignores_whitespace_blank_lines_comments_and_numbers(loop: Parsons) -> None:
    text = ("\ufeff# my answer\n\n   pred=model( x )\n1. optimizer.zero_grad()\r\n"
            "loss = loss_fn(pred,y)   # the loss\n\t\tloss.backward()\n\n5) optimizer.step()\n")
    assert order_from_text(loop, text) == ["forward", "zero", "loss", "backward", "step"]
    assert grade_text(loop, text).passed


def test_order_from_text_keeps_duplicates_for_grading_to_report(loop: Parsons) -> None:
    text = RIGHT + "optimizer.step()\n"
    assert order_from_text(loop, text)[-2:] == ["step", "step"]
    assert grade_text(loop, text).checks[0].message == "`optimizer.step()` is there 2 times"


def test_an_unknown_line_names_its_line_number_and_the_closest_line(loop: Parsons) -> None:
    verdict = grade_text(loop, "optimizer.zero_grad()\npred = model(x)\nloss.backwards()\n")
    lines, order = verdict.checks
    assert (verdict.status, lines.status, order.status) == ("fail", "fail", "skip")
    assert lines.message == "line 3, `loss.backwards()`, is not one of the lines to order"
    assert lines.help == "did you mean `loss.backward()`?"
    verdict = grade_text(loop, "for x, y in batches:\n")
    assert verdict.checks[0].help == (
        "copy each line as given: `optimizer.zero_grad()`, `pred = model(x)`, "
        "`loss = loss_fn(pred, y)`, `loss.backward()`, `optimizer.step()`")


def test_an_empty_answer_has_none_of_the_lines(loop: Parsons) -> None:
    assert grade_text(loop, "\n# nothing yet\n").checks[0].message == (
        "your answer has none of the 5 lines")


def test_a_file_that_is_not_utf8_is_an_error(loop: Parsons) -> None:
    verdict = grade_file(loop, b"\xff\xfe\x00bad", "order.txt")
    assert verdict.status == "error"
    assert [(c.name, c.status, c.message) for c in verdict.checks] == [
        ("file", "error", "order.txt is not UTF-8 text")]
    assert grade_file(loop, RIGHT.encode("utf-8-sig"), "order.txt").passed


# --- what a correct order runs --------------------------------------------------------------


def test_assembled_puts_the_lines_in_a_loop_after_the_setup(loop: Parsons) -> None:
    code = assembled(loop, ("forward", "zero", "loss", "backward", "step"))
    assert code.endswith(
        "\nlosses = []\nfor _ in range(20):\n    pred = model(x)\n    optimizer.zero_grad()\n"
        "    loss = loss_fn(pred, y)\n    loss.backward()\n    optimizer.step()\n"
        "    losses.append(loss.item())\n")
    assert code.startswith("import torch\n")
    assert run_series(loop) == ("losses",)
    compile(code, "<assembled>", "exec")


def test_assembled_without_run_is_the_lines_in_order() -> None:
    step = small([("a", ()), ("b", ("a",))])
    assert assembled(step, ("a", "b")) == "c_a()\nc_b()\n"
    assert run_series(step) == ()


def test_the_assembled_loop_makes_the_loss_fall(loop: Parsons) -> None:
    namespace: dict[str, object] = {}
    exec(assembled(loop, loop.solution_order), namespace)
    losses = namespace["losses"]
    assert isinstance(losses, list) and len(losses) == 20
    assert all(later < earlier for earlier, later in itertools.pairwise(losses))


def test_the_run_starts_with_leftovers_so_zero_grad_last_trains_differently(
        loop: Parsons) -> None:
    """The prompt's claim, run with torch: the loop's setup leaves gradients in .grad, and
    clearing only at the end lets them into the first step (and only the first)."""
    def losses(order: tuple[str, ...], setup_leftovers: bool = True) -> list[float]:
        code = assembled(loop, order)
        marker = "model(x).sum().backward()"
        assert code.count(marker) == 1
        if not setup_leftovers:
            code = code.replace(marker, "pass")
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        losses: list[float] = namespace["losses"]
        return losses

    zero_last = ("forward", "loss", "backward", "step", "zero")
    right, last = losses(loop.solution_order), losses(zero_last)
    assert right[0] == last[0] and right[1] != last[1]  # the first step differs
    assert losses(loop.solution_order, False) == losses(zero_last, False)


def test_is_correct_needs_every_line_once(loop: Parsons) -> None:
    assert is_correct(loop, loop.solution_order)
    assert not is_correct(loop, loop.solution_order[:4])
    assert not is_correct(loop, (*loop.solution_order, "zero"))


def test_a_step_with_a_run_is_a_frozen_value() -> None:
    run = ParsonsRun("x = 1", "x", "xs")
    assert run.repeat == 10
    with pytest.raises(AttributeError):
        run.repeat = 3  # type: ignore[misc]


# --- gradtutor check on a Parsons step ------------------------------------------------------


def test_check_passes_a_right_order(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text(RIGHT, encoding="utf-8")
    code, out, err = cli("check", "order-the-loop", str(answer), "--plain")
    assert (code, err) == (0, "")
    assert out.startswith("[OK] order-the-loop: Passed\n")
    assert "passed: lines, order" in out


def test_check_fails_a_wrong_order_and_says_why(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text("pred = model(x)\nloss = loss_fn(pred, y)\nloss.backward()\n"
                      "optimizer.zero_grad()\noptimizer.step()\n", encoding="utf-8")
    code, out, err = cli("check", "order-the-loop", str(answer), "--plain", width=100)
    assert (code, err) == (1, "")
    flat = " ".join(out.split())
    assert "[X] order-the-loop: Not yet" in flat
    assert ("You put `loss.backward()` before `optimizer.zero_grad()`: backward() adds this "
            "batch's gradient to what .grad holds" in flat)
    assert "3 loss.backward() out of place" in flat
    assert "hint:" not in flat and "`--verbose` shows the whole verdict" in flat  # unasked
    code, out, err = cli("check", "order-the-loop", str(answer), "--plain", "--verbose",
                         width=100)
    flat = " ".join(out.split())
    assert (code, err) == (1, "")
    assert "Clearing between backward() and step() leaves step() no gradient" in flat
    assert "hint: `loss.backward()` must come after" in flat
    assert "--verbose" not in flat


def test_check_json_for_a_parsons_step(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text("optimizer.step()\n", encoding="utf-8")
    code, out, err = cli("check", "order-the-loop", str(answer), "--json")
    assert (code, err) == (1, "")
    payload = json.loads(out)
    assert (payload["exercise"], payload["status"], payload["seed"]) == (
        "order-the-loop", "fail", 0)
    assert [(c["name"], c["status"]) for c in payload["checks"]] == [
        ("lines", "fail"), ("order", "skip")]


def test_check_reads_the_workspace_txt_file_by_default(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "order-the-loop.txt").write_text(RIGHT, encoding="utf-8")
    code, _, err = cli("check", "order-the-loop", "--workspace", str(folder), "--json")
    assert (code, err) == (0, "")


def test_check_without_an_answer_file_says_what_to_write_in_it(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("check", "order-the-loop", "--workspace", str(tmp_path))
    assert (code, out) == (2, "")
    # the lines in the order the step starts from, which is not an answer
    assert err == (f"gradtutor: error: no answer file for order-the-loop yet: "
                   f"{tmp_path / 'order-the-loop.txt'} (hint: write its 5 lines there in your "
                   "order, one per line: `optimizer.step()`, `optimizer.zero_grad()`, "
                   "`loss = loss_fn(pred, y)`, `pred = model(x)`, `loss.backward()`)\n")
    written = tmp_path / "order-the-loop.txt"
    written.write_text("\n".join(re.findall(r"`([^`]+)`", err)) + "\n", encoding="utf-8")
    code, out, _ = cli("check", "order-the-loop", "--workspace", str(tmp_path))
    assert code == 1 and "order: failed" in out  # a file of that format is graded


def test_checking_an_order_shows_no_seed_or_time(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text(RIGHT, encoding="utf-8")
    _, out, _ = cli("check", "order-the-loop", str(answer))
    assert "seed" not in out and " ms" not in out


def test_check_a_parsons_step_of_another_course(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text("opt.zero_grad()\nloss = model(x).pow(2).mean()\nloss.backward()\n"
                      "opt.step()\n", encoding="utf-8")
    code, _, err = cli("check", "training-step", str(answer), *COURSE)
    assert (code, err) == (0, "")


def test_check_an_unknown_step_suggests_one(cli: Cli, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text(RIGHT, encoding="utf-8")
    code, out, err = cli("check", "order-the-lop", str(answer))
    assert (code, out) == (2, "")
    assert err.startswith("gradtutor: error: no exercise 'order-the-lop' (hint: did you mean "
                          "'order-the-loop'?")


def test_check_all_leaves_parsons_steps_out(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "order-the-loop.txt").write_text(RIGHT, encoding="utf-8")
    code, out, _ = cli("check", "--all", "--json", "--workspace", str(tmp_path), *COURSE)
    payload = json.loads(out)
    assert [e["exercise"] for e in payload["exercises"]] == ["square-grad"]
    assert code == 1


def test_check_lesson_checks_only_that_lessons_exercises(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("check", "--lesson", "second", "--json", "--workspace", str(tmp_path),
                       *COURSE)
    assert [e["exercise"] for e in json.loads(out)["exercises"]] == ["square-grad"]
    assert code == 1  # no file written for it: failed, and the report stays complete
    code, out, err = cli("check", "--lesson", "basics", "--workspace", str(tmp_path), *COURSE)
    assert (code, out) == (2, "")
    assert "no exercises in basics" in err
    code, _, err = cli("check", "--lesson", "secnd", *COURSE)
    assert code == 2 and "no lesson 'secnd'" in err and "did you mean 'second'?" in err
    code, _, err = cli("check", "square-grad", "--lesson", "second", *COURSE)
    assert code == 2 and "--all and --lesson check workspace files" in err


def test_the_order_last_given_in_the_tutor_is_what_check_reads(cli: Cli) -> None:
    """`gradtutor check STEP` without FILE reads the workspace's answer file: the tutor
    writes each order it grades there, so solving the step in the tutor counts."""
    step = load_course(Path(COURSE[1]), rules=EXERCISE_RULES).find("second").steps[2]
    assert isinstance(step, Parsons) and step.id == "training-step"
    shown = initial_order(step)
    wrong = " ".join(str(n) for n in range(1, len(shown) + 1))  # as it starts: wrong
    right = " ".join(str(shown.index(line) + 1) for line in step.solution_order)
    cli("start", "second", *COURSE, stdin=f"n\nn\n{wrong}\nq\n")
    code, out, _ = cli("check", "training-step", *COURSE)
    assert code == 1 and "Not yet" in out
    cli("start", "second", *COURSE, stdin=f"{right}\nq\n")
    code, out, err = cli("check", "training-step", *COURSE)
    assert (code, err) == (0, ""), out
    assert "Passed" in out
