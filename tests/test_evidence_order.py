"""A failed check's evidence leads with the failing case: on screen and in `--json`, the rows
that show the mistake come before the cases that passed, the rest in the run's order. Judged
from plain data as the tutor judges it, for a declared exercise and a registered checker."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from gradtutor.checking.checkers import judge_of
from gradtutor.checking.checkers.fix_the_loop import _step_table
from gradtutor.checking.checkers.training import per_param_table
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Table, Verdict, overall, to_json
from gradtutor.lessons.course import load_course
from gradtutor.ui.check_view import verdict_view
from gradtutor.ui.render import Look


def shown(verdict: Verdict, width: int, plain: bool) -> str:
    buffer = io.StringIO()
    Console(width=width, file=buffer, color_system=None).print(
        verdict_view(verdict, Look(plain=plain)))
    return buffer.getvalue()


def judged(exercise: str, case: Any, reference: Any, seen: Any) -> Verdict:
    step = load_course(lang="en", rules=EXERCISE_RULES).find_exercise(exercise)
    checks = tuple(judge_of(step)([case], [reference], [seen]))
    return Verdict(exercise, overall(checks), checks, seed=7, duration_ms=12)


def test_failing_rows_come_first_and_the_rest_keep_their_order() -> None:
    table = Table(("case",), (("1",), ("2",), ("3",), ("4",)), frozenset({1, 3}))
    assert table.failing_first() == (("2",), ("4",), ("1",), ("3",))
    assert Table(("case",), (("1",), ("2",))).failing_first() == (("1",), ("2",))


def clear_grads_second_group_kept() -> Verdict:
    """clear-grads, declared in the lesson, on an optimizer of two param groups: the function
    cleared the first group and left the second group's gradient."""
    weights = [[[1.0], [2.0]], [[3.0]]]
    reference = {"weights": weights, "grads": [[[0.5], [0.25]], [[0.75]]],
                 "solution": {"grads": [[None, None], [None]], "weights": weights,
                              "events": [{"event": "zero_grad", "set_to_none": True}]}}
    seen = {"grads": [[None, None], [[0.75]]], "weights": weights, "events": []}
    return judged("clear-grads", {}, reference, seen)


@pytest.mark.parametrize(("width", "plain"), [(80, False), (80, True), (60, False),
                                              (120, True)])
def test_a_declared_checks_table_shows_the_group_left_uncleared_first(width: int,
                                                                       plain: bool) -> None:
    verdict = clear_grads_second_group_kept()
    failed = next(c for c in verdict.checks if c.status == "fail")
    assert failed.name == "all-none" and failed.evidence is not None
    assert [str(row[0]) for row in failed.evidence.rows] == ["group 1", "group 1", "group 2"]
    out = shown(verdict, width, plain)
    assert out.index("group 2") < out.index("group 1")
    assert out.index("0.75") < out.index("0.5")


def test_a_declared_checks_json_rows_lead_with_the_failing_one_and_count_it() -> None:
    evidence = next(c for c in to_json(clear_grads_second_group_kept())["checks"]
                    if c["status"] == "fail")["evidence"]
    assert [row[0] for row in evidence["rows"]] == ["group 2", "group 1", "group 1"]
    assert evidence["rows"][0][-1] == "[0.75]"
    assert evidence["failing"] == 1


def manual_sgd_never_clears() -> Verdict:
    """manual-sgd, a registered checker, on two batches: the first update is right; w.grad is
    never cleared, so the second update follows batch 1's gradient plus batch 2's."""
    call = {"event": "loss_fn", "ours": True, "tensor": True, "is_leaf": True,
            "requires_grad": True}
    seen = {"events": [{**call, "batch": 0, "w": [1.0, 2.0]},
                       {"event": "accumulate", "grad": [1.0, 1.0]},
                       {**call, "batch": 1, "w": [0.9, 1.9]},
                       {"event": "accumulate", "grad": [3.0, 1.0]}],
            "raised": None, "final": [0.6, 1.8], "final_leaf": True,
            "final_requires_grad": True, "version": 2}
    reference = {"starts": [[1.0, 2.0], [0.9, 1.9]], "grads": [[1.0, 1.0], [2.0, 0.0]],
                 "final": [0.7, 1.9]}
    return judged("manual-sgd", {"batches": 2, "lr": 0.1}, reference, seen)


@pytest.mark.parametrize(("width", "plain"), [(80, False), (80, True), (60, False),
                                              (160, True)])
def test_a_registered_checkers_table_shows_the_wrong_update_first(width: int,
                                                                  plain: bool) -> None:
    verdict = manual_sgd_never_clears()
    failed = next(c for c in verdict.checks if c.status == "fail")
    assert failed.name == "per-batch-gradient" and failed.evidence is not None
    assert [row[0] for row in failed.evidence.rows] == ["1", "2"]  # the run's order, kept
    out = shown(verdict, width, plain)
    # update 2's w.grad held both batches' gradients: [3, 1]; update 1's held [1, 1]
    assert out.index("[3, 1]") < out.index("[1, 1]")


def test_a_registered_checkers_json_rows_lead_with_the_failing_update() -> None:
    evidence = next(c for c in to_json(manual_sgd_never_clears())["checks"]
                    if c["status"] == "fail")["evidence"]
    assert [row[0] for row in evidence["rows"]] == ["2", "1"]
    assert evidence["failing"] == 1


def test_loop_tables_mark_the_steps_and_parameters_that_went_wrong() -> None:
    # the step that went wrong, with the previous batch's gradient its message names
    steps = _step_table(1, [3.0], [2.0], [1.0])
    assert steps.columns[-1] == "gradient of batch 1"
    assert steps.rows == (("2", "[3]", "[2]", "[1]"),) and steps.failing == {0}
    params = per_param_table(["a", "b", "c"], ("used", "right"),
                             {"a": [1.0], "b": [5.0], "c": [2.0]},
                             {"a": [1.0], "b": [4.0], "c": [2.0]}, against=(0, 1))
    assert [row[0] for row in params.failing_first()] == ["b", "a", "c"]
