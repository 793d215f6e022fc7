"""The `squared-error` input family (gradtutor/checking/checkers/graph_facts.py): its cases,
what its worker side observes of a function, and the facts its tutor side reads from that.

The worker side runs here, in the test's process, on a trace that is started but not
installed (installing would wrap torch for every later test); the hooks it watches with work
without it. The facts are computed from a JSON round trip of what was observed, as the tutor
gets them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from gradtutor.checking import trace
from gradtutor.checking.checkers import graph_facts
from gradtutor.checking.checkers.common import close, flat
from gradtutor.checking.checkers.families import FAMILIES


@pytest.fixture
def case() -> dict[str, Any]:
    return graph_facts.cases(0)[0]


@pytest.fixture(autouse=True)
def started() -> Iterator[None]:
    yield
    current = trace.current()
    if current is not None:
        current.close()


def facts_of(fn: Callable[..., Any], case: dict[str, Any]) -> dict[str, Any]:
    """Observe `fn` on `case` in the worker's way, and read the facts in the tutor's."""
    case_trace = trace.start()
    observed = graph_facts.observe(case, fn, case_trace, ())
    reference = graph_facts.reference(case)
    plain_case, plain_reference, plain_observed = json.loads(
        json.dumps([case, reference, observed]))
    return graph_facts.facts(plain_case, plain_reference, plain_observed, ())


def test_cases_differ_in_shape_and_keep_their_values_apart() -> None:
    for seed in range(20):
        drawn = graph_facts.cases(seed)
        assert drawn == graph_facts.cases(seed)  # the same seed, the same cases
        assert len(drawn) == 4
        shapes = {json.dumps([len(flat(c["w"]) or ()), isinstance(c["w"][0], list)])
                  for c in drawn}
        assert len(shapes) == 4
        for c in drawn:
            w, x, y = (flat(c[name]) or [] for name in ("w", "x", "y"))
            assert all(abs(x_i - 1) >= 0.1 for x_i in x)  # the error's slope is not the gradient
            assert all(abs(w_i * x_i - y_i) >= 0.25 for w_i, x_i, y_i in zip(w, x, y, strict=True))


def test_the_reference_is_the_chain_rule(case: dict[str, Any]) -> None:
    reference = graph_facts.reference(case)
    w, x, y = (torch.tensor(case[name], dtype=torch.float64) for name in ("w", "x", "y"))
    assert close(reference["grad"], (2 * (w * x - y) * x).tolist())
    assert close(reference["outer"], (2 * (w * x - y)).tolist())
    assert close(reference["loss"], ((w * x - y) ** 2).sum().item())


def test_by_hand_backward_and_autograd_grad_are_told_apart(case: dict[str, Any]) -> None:
    by_hand = facts_of(lambda w, x, y: 2 * (w * x - y) * x, case)
    assert (by_hand["autograd-count"], by_hand["backward-count"]) == (0, 0)
    assert close(by_hand["returned"], by_hand["gradient"]) and by_hand["grad-after"] is None

    def backward(w: Any, x: Any, y: Any) -> Any:
        ((w * x - y) ** 2).sum().backward()
        return w.grad

    seen = facts_of(backward, case)
    assert (seen["autograd-count"], seen["backward-count"]) == (1, 1)
    assert seen["returned-is-grad"] is True and seen["ran"] == "ran once"

    def autograd_grad(w: Any, x: Any, y: Any) -> Any:
        return torch.autograd.grad(((w * x - y) ** 2).sum(), w)[0]

    seen = facts_of(autograd_grad, case)
    assert (seen["autograd-count"], seen["backward-count"]) == (1, 0)
    assert seen["grad-after"] is None and seen["returned-scale"] == 1
    # the calls of torch.autograd.grad are counted, those for pred alone too
    assert (seen["autograd-grad-count"], seen["backward-from-size"]) == (1, None)
    assert (by_hand["autograd-grad-count"], facts_of(backward, case)["autograd-grad-count"]) == (
        0, 0)

    def pred_grad(w: Any, x: Any, y: Any) -> Any:
        pred = w * x
        return torch.autograd.grad(((pred - y) ** 2).sum(), pred)[0]

    seen = facts_of(pred_grad, case)
    assert (seen["autograd-grad-count"], seen["autograd-count"]) == (1, 0)


def test_a_hook_called_by_hand_is_not_counted(case: dict[str, Any]) -> None:
    def forge(w: Any, x: Any, y: Any) -> Any:
        for hook in list(w._backward_hooks.values()):
            hook(torch.ones_like(w))
        return None

    assert facts_of(forge, case)["autograd-count"] == 0


@pytest.mark.parametrize(("kind", "fn"), [
    ("not-scalar", lambda w, x, y: ((w * x - y) ** 2).backward()),
    ("shape-mismatch", lambda w, x, y: ((w * x - y) ** 2).backward(torch.tensor(1.0))),
    ("no-grad-fn", lambda w, x, y: ((w.detach() * x - y) ** 2).sum().backward()),
    ("not-in-graph", lambda w, x, y: torch.autograd.grad((x * y).sum().requires_grad_(), w)),
])
def test_graph_errors_become_facts(case: dict[str, Any], kind: str,
                                   fn: Callable[..., Any]) -> None:
    seen = facts_of(fn, case)
    assert seen["error-kind"] == kind
    assert seen["error"].startswith("RuntimeError: ")
    assert "returned" not in seen  # nothing came back: checks of it do not judge this case


def test_a_freed_graph_becomes_a_fact(case: dict[str, Any]) -> None:
    def twice(w: Any, x: Any, y: Any) -> Any:
        loss = ((w * x - y) ** 2).sum()
        loss.backward()
        loss.backward()

    seen = facts_of(twice, case)
    assert seen["error-kind"] == "graph-freed" and seen["backward-count"] == 1
    # the first sentence of PyTorch's message, not the whole of it
    assert seen["error"].endswith("already been freed).")


def test_other_errors_are_the_learners_code_failing(case: dict[str, Any]) -> None:
    def fails(w: Any, x: Any, y: Any) -> Any:
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="something else"):
        facts_of(fails, case)
    with pytest.raises(ZeroDivisionError):
        facts_of(lambda w, x, y: 1 / 0, case)


@pytest.mark.parametrize(("fn", "scale"), [
    (lambda w, x, y: 2 * (w * x - y) * x, 1.0),
    (lambda w, x, y: (w * x - y) * x, 0.5),
    (lambda w, x, y: 2 * (y - w * x) * x, -1.0),
    (lambda w, x, y: torch.zeros_like(w), 0.0),
    (lambda w, x, y: 2 * (w * x - y), None),  # the outer slope: no multiple of the gradient
    (lambda w, x, y: (2 * (w * x - y) * x).sum(), None),  # another shape
])
def test_returned_scale(case: dict[str, Any], fn: Callable[..., Any],
                        scale: float | None) -> None:
    assert facts_of(fn, case)["returned-scale"] == scale


def test_a_mean_is_one_over_the_size(case: dict[str, Any]) -> None:
    def mean(w: Any, x: Any, y: Any) -> Any:
        ((w * x - y) ** 2).mean().backward()
        return w.grad

    seen = facts_of(mean, case)
    assert seen["returned-scale"] == round(1 / seen["size"], 3)
    assert seen["grad-after-scale"] == seen["returned-scale"]


def test_what_is_not_a_tensor_is_named(case: dict[str, Any]) -> None:
    assert facts_of(lambda w, x, y: (w,), case)["returned-kind"] == "tuple"
    assert facts_of(lambda w, x, y: ..., case)["returned-kind"] == "ellipsis"
    seen = facts_of(lambda w, x, y: None, case)
    assert seen["returned"] is None and seen["returned-kind"] is None
    assert seen["returned-scale"] is None


def test_the_family_is_registered_and_names_every_fact(case: dict[str, Any]) -> None:
    family = FAMILIES["squared-error"]
    assert family.arity == 3 and family.names(()) == graph_facts.NAMES
    seen = facts_of(lambda w, x, y: 2 * (w * x - y) * x, case)
    assert set(seen) == graph_facts.NAMES
    caught = facts_of(lambda w, x, y: ((w * x - y) ** 2).backward(), case)
    assert set(caught) < graph_facts.NAMES
    titles, cells = family.columns(case)
    assert titles == ("w", "x", "y") and len(cells) == 3
