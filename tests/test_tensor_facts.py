"""The `leaf-fn` and `values-fn` input families (checkers/tensor_facts.py, values_facts.py):
each fact they report is what real torch says of the returned value, and a check's conditions
read them."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from gradtutor.checking import trace
from gradtutor.checking.checkers import tensor_facts, values_facts
from gradtutor.checking.checkers.common import uncalled
from gradtutor.checking.checkers.declared import (
    Case,
    WorkerChecker,
    holds,
    judge_checks,
    judge_exercise,
    worker_spec,
)
from gradtutor.checking.checkers.families import FAMILIES
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

CASE = {"w": [[0.5, -1.25], [2.0, 0.75]]}


@pytest.fixture(autouse=True)
def grad_mode_back() -> Iterator[None]:
    yield
    torch.set_grad_enabled(True)


def leaf_fn(fn: Callable[[Any], Any], case: dict[str, Any] = CASE) -> dict[str, Any]:
    """The facts `leaf-fn` reports of fn(w), observed as the worker observes them."""
    case_trace = trace.start()
    try:
        observed = tensor_facts.observe_leaf_fn(case, fn, case_trace)
    finally:
        case_trace.close()
    return tensor_facts.leaf_fn_facts(case, {}, observed, ())


def values_fn(fn: Callable[[Any], Any], values: list[float]) -> dict[str, Any]:
    case_trace = trace.start()
    try:
        observed = values_facts.observe_values_fn({"values": values}, fn, case_trace)
    finally:
        case_trace.close()
    return values_facts.values_fn_facts({"values": values}, {}, observed, ())


def test_the_families_are_registered_with_every_fact_they_give() -> None:
    leaf, values = FAMILIES["leaf-fn"], FAMILIES["values-fn"]
    assert (leaf.arity, values.arity) == (1, 1)
    assert set(leaf_fn(lambda w: w * 2)) == leaf.names(())
    assert set(values_fn(lambda v: torch.tensor(v), [1.0, 2.0])) == values.names(())


def test_detach_shares_memory_and_leaves_the_graph() -> None:
    facts = leaf_fn(lambda w: w.detach())
    assert facts["tensor"] is True and facts["requires-grad"] is False
    assert facts["is-leaf"] is True and facts["grad-fn"] is None
    assert facts["shares-memory"] is True and facts["reaches-w"] is False
    assert holds("returned is w", facts, {})
    copied = leaf_fn(lambda w: w.detach().clone())
    assert copied["shares-memory"] is False and copied["requires-grad"] is False
    assert leaf_fn(lambda w: w.data)["shares-memory"] is True


def test_a_result_names_its_node_and_reaches_w() -> None:
    facts = leaf_fn(lambda w: w.clone())
    assert facts["grad-fn"] == "CloneBackward0" and facts["next-functions"] == "AccumulateGrad"
    assert facts["requires-grad"] is True and facts["is-leaf"] is False
    assert facts["reaches-w"] is True and facts["shares-memory"] is False
    assert holds("grad-fn is 'CloneBackward0'", facts, {})
    chained = leaf_fn(lambda w: w * 2 + 1)
    assert chained["grad-fn"] == "AddBackward0" and chained["next-functions"] == "MulBackward0"


def test_w_itself_is_a_leaf_that_reaches_itself() -> None:
    facts = leaf_fn(lambda w: w)
    assert facts["is-leaf"] is True and facts["requires-grad"] is True
    assert facts["shares-memory"] is True and facts["reaches-w"] is True
    assert facts["dtype"] == "float32" and facts["shape"] == "[2, 2]"


def test_torch_tensor_of_results_is_a_new_leaf_and_stack_keeps_the_graph() -> None:
    def copied(w: torch.Tensor) -> torch.Tensor:
        return torch.tensor([w.sum().item(), (w ** 2).sum().item()], requires_grad=True)

    new_leaf = leaf_fn(copied)
    assert new_leaf["is-leaf"] is True and new_leaf["requires-grad"] is True
    assert new_leaf["reaches-w"] is False
    stacked = leaf_fn(lambda w: torch.stack([w.sum(), (w ** 2).sum()]))
    assert stacked["grad-fn"] == "StackBackward0"
    assert stacked["next-functions"] == "SumBackward0, SumBackward0"
    assert stacked["reaches-w"] is True
    assert holds("returned is solution", stacked, new_leaf)  # the same numbers
    assert holds("reaches-w is true", stacked, {}) and not holds("reaches-w is true",
                                                                 new_leaf, {})


def test_reaches_w_reads_a_graph_that_backward_already_freed() -> None:
    def backward_then_return(w: torch.Tensor) -> torch.Tensor:
        loss = (w * w).sum()
        loss.backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is untyped
        return loss

    facts = leaf_fn(backward_then_return)
    assert facts["reaches-w"] is True
    assert facts["backward-count"] == 1
    assert holds("grad-after is 2x w", facts, {})


def test_a_python_number_is_a_float_with_no_tensor_facts() -> None:
    facts = leaf_fn(lambda w: w.sum().item())
    assert holds("returned is a float", facts, {})
    assert not holds("returned is a tensor", facts, {})
    assert facts["returned-kind"] == "float" and facts["tensor"] is False
    assert facts["number"] == pytest.approx(0.5 - 1.25 + 2.0 + 0.75)
    assert facts["requires-grad"] is None and facts["grad-fn"] is None
    assert facts["reaches-w"] is None and facts["shares-memory"] is None
    assert leaf_fn(lambda w: None)["returned-kind"] == "None"
    assert leaf_fn(lambda w: [w, w])["returned-kind"] == "list"


def test_no_grad_records_nothing_and_leaves_w_tracked() -> None:
    def predict(w: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return 3 * w + 1

    facts = leaf_fn(predict)
    assert facts["requires-grad"] is False and facts["grad-fn"] is None
    assert facts["w-requires-grad-after"] is True and facts["grad-enabled-after"] is True


def test_what_was_recorded_while_the_function_ran_is_seen_even_when_cut_off() -> None:
    def predict(w: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return 3 * w + 1

    def inference(w: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return 3 * w + 1

    assert leaf_fn(predict)["recorded"] is None and leaf_fn(inference)["recorded"] is None
    assert leaf_fn(lambda w: w.detach() * 3 + 1)["recorded"] is None  # w left first: no graph
    detached = leaf_fn(lambda w: (3 * w + 1).detach())
    assert detached["requires-grad"] is False and detached["grad-fn"] is None
    assert detached["recorded"] == "MulBackward0, AddBackward0"  # recorded, then cut off
    assert holds("recorded is not none", detached, {})


def test_the_call_that_made_the_returned_tensor_is_named() -> None:
    with warnings.catch_warnings():  # torch's own, said once per process: maybe not here
        warnings.filterwarnings("ignore", message=".*requires_grad=True to a scalar")
        assert leaf_fn(lambda w: torch.tensor([w.sum(), (w ** 2).sum()]))["made-by"] == "tensor"
    stacked = leaf_fn(lambda w: torch.stack([w.sum(), (w ** 2).sum()]))
    assert stacked["made-by"] == "stack" and stacked["grad-fn"] == "StackBackward0"
    assert leaf_fn(lambda w: torch.stack([w.sum(), w.sum()]).detach())["made-by"] == "detach"
    # the call that first made it, not one that handed the same tensor back (in place)
    assert leaf_fn(lambda w: torch.tensor([1.0, 2.0]).requires_grad_())["made-by"] == "tensor"
    assert leaf_fn(lambda w: w)["made-by"] is None  # no call of the function made w
    assert holds("made-by is 'detach'", leaf_fn(lambda w: w.sum().detach()), {})


def test_grad_mode_left_off_is_seen_and_switched_back_on() -> None:
    def left_off(w: torch.Tensor) -> torch.Tensor:
        torch.set_grad_enabled(False)
        return 3 * w

    facts = leaf_fn(left_off)
    assert facts["grad-enabled-after"] is False and facts["requires-grad"] is False
    assert torch.is_grad_enabled()  # the next case starts with recording on


def test_what_the_function_did_to_w_is_seen() -> None:
    untracked = leaf_fn(lambda w: w.requires_grad_(False).clone())
    assert untracked["w-requires-grad-after"] is False

    def bump(w: torch.Tensor) -> torch.Tensor:
        d = w.detach()
        d += 1
        return d

    bumped = leaf_fn(bump)
    assert not holds("w-after is w", bumped, {})
    assert holds("w-after is w", leaf_fn(lambda w: w.detach().clone()), {})


def test_values_fn_sees_the_dtype_torch_picks() -> None:
    ints = values_fn(lambda v: torch.tensor(v), [3, -1, 2])
    assert ints["dtype"] == "int64" and holds("dtype is 'int64'", ints, {})
    floats = values_fn(lambda v: torch.tensor(v), [3.5, -1.0])
    assert floats["dtype"] == "float32" and floats["is-leaf"] is True
    scaled = values_fn(lambda v: torch.tensor(v, dtype=torch.float32, requires_grad=True) * 0.1,
                       [3, -1, 2])
    assert scaled["is-leaf"] is False and scaled["grad-fn"] == "MulBackward0"
    assert holds("returned is 0.1x values", scaled, {})


@pytest.mark.parametrize("seed", range(20))
def test_every_seed_has_a_list_of_whole_numbers_and_shapes_that_differ(seed: int) -> None:
    lists = [case["values"] for case in values_facts.values_cases(seed)]
    assert sum(all(type(x) is int for x in values) for values in lists) == 1
    assert all(2 <= len(values) <= 5 for values in lists)
    shapes = [str(torch.tensor(case["w"]).shape) for case in tensor_facts.leaf_cases(seed)]
    assert len(set(shapes)) == 4
    values = [x for case in tensor_facts.leaf_cases(seed)
              for x in torch.tensor(case["w"]).flatten().tolist()]
    assert all(abs(x) >= 0.1 for x in values)


def test_cases_are_the_same_for_a_seed() -> None:
    assert tensor_facts.leaf_cases(3) == tensor_facts.leaf_cases(3)
    assert values_facts.values_cases(3) == values_facts.values_cases(3)
    assert values_facts.values_cases(3) != values_facts.values_cases(4)


def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


def judged(exercise_id: str, fn: Callable[[Any], Any]) -> dict[str, Check]:
    """The exercise's declared checks, judged on one case of `fn` against its solution."""
    step = exercise(exercise_id)
    namespace: dict[str, Any] = {}
    exec(compile(step.solution, "<solution>", "exec"), namespace)  # noqa: S102 - the lesson's
    run = Case(leaf_fn(fn), leaf_fn(namespace[step.function]), tensor_facts.leaf_columns(CASE))
    return {c.name: c for c in judge_checks(step.checks, [run], FAMILIES["leaf-fn"])}


def test_a_method_returned_uncalled_is_seen_by_its_name() -> None:
    facts = leaf_fn(lambda w: (w * 2).sum().item)
    assert facts["returned"] == {"not_a_tensor": "builtin_function_or_method",
                                 "uncalled": "item"}
    assert facts["returned-kind"] == "builtin_function_or_method"  # conditions read it as before
    assert uncalled(facts["returned"]) == "item"
    assert "uncalled" not in leaf_fn(lambda w: (w * 2).sum().item())["returned"]
    assert "uncalled" not in leaf_fn(lambda w: ...)["returned"]


def checked(exercise_id: str, fn: Callable[..., Any], seed: int = 1) -> dict[str, Check]:
    """The exercise's checks of `fn` on the first case of `seed`, as a real check decides
    them: observed through the worker's own `observe`, judged by the exercise's judge."""
    worker = WorkerChecker(worker_spec(exercise(exercise_id)))
    case = worker.cases(seed)[0]
    reference = worker.expected(case)
    case_trace = trace.start()
    try:
        observed = worker.observe(case, fn, case_trace)
    finally:
        case_trace.close()
    checks = judge_exercise(exercise(exercise_id))([case], [reference], [observed])
    return {c.name: c for c in checks}


def total_loss_item(w: torch.Tensor) -> Any:
    total = torch.zeros(())
    for target in (1.0, 2.0, 3.0):
        total = total + ((w - target) ** 2).mean()
    return total.item


def grad_report_items(model: Any, max_norm: float) -> Any:
    report = {name: "ok" for name, _ in model.named_parameters()}
    return report.items


@pytest.mark.parametrize(("exercise_id", "check", "fn", "written"), [
    ("log-losses", "returns-float", total_loss_item, "total.item"),
    ("grad-health", "returns-dict", grad_report_items, "report.items"),
])
def test_a_method_returned_without_its_parentheses_is_named_as_written(
        exercise_id: str, check: str, fn: Callable[..., Any], written: str) -> None:
    said = checked(exercise_id, fn)[check]
    assert said.status == "fail"
    assert said.message.startswith(f"You returned `{written}` itself, a function or method "
                                   "that was never called: without parentheses after its name")
    assert "builtin_function_or_method" not in said.message
    assert f"{written}()" not in said.message  # the mistake named, not the fix's code


def test_grad_health_keeps_its_own_words_for_a_value_that_is_no_function() -> None:
    returned_list = checked("grad-health", lambda model, max_norm: [])["returns-dict"]
    assert returned_list.message == "You returned a list, not a dict."


def test_a_method_read_from_an_unnamed_value_is_named_alone() -> None:
    assert trace.uncalled_returns(lambda w: (w * 2).sum().item) == {}
    assert trace.uncalled_returns(lambda w: w.item) == {"item": "w.item"}
    assert trace.uncalled_returns(lambda w: w.grad.clone) == {"clone": "w.grad.clone"}
    assert checked("log-losses", lambda w: (w * 2).sum().item)["returns-float"].message.startswith(
        "You returned `item` itself")


def test_no_grad_predict_fails_when_w_itself_is_changed_in_place() -> None:
    def predict(w: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            w.mul_(3)
            return w + 1

    checks = judged("no-grad-predict", predict)
    assert [checks[n].status for n in ("returns-tensor", "right-values", "no-record")] == [
        "pass", "pass", "pass"]  # the answer is right and unrecorded ...
    assert checks["w-unchanged"].status == "fail"  # ... but w is not what it was
    assert "changed w itself" in checks["w-unchanged"].message
    assert judged("no-grad-predict", lambda w: (3 * w + 1).detach())["w-unchanged"].status == (
        "pass")


def test_a_line_that_only_names_a_method_is_read_from_the_bytecode() -> None:
    def evaluate(model: Any, loss_fn: Any, batches: Any) -> Any:
        model.eval  # noqa: B018 - the mistake under test
        for x, _ in batches:
            pred = model(x)
            pred.retain_grad  # noqa: B018
            torch.no_grad  # noqa: B018
            x.grad  # noqa: B018 - data, not a method: not reported
        model.train()
        return (model.eval, len(batches))

    assert trace.uncalled_lines(evaluate) == ["model.eval", "pred.retain_grad",
                                              "torch.no_grad"]
    assert trace.uncalled_lines(lambda w: w.detach()) == []
    assert trace.uncalled_lines(len) == []  # not a Python function: nothing to read
