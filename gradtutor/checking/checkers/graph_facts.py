"""The `squared-error` input family (`FAMILY`, registered in `families.py`): `fn(w, x, y)`
with a fresh leaf `w`, and inputs `x` and targets `y` that need no gradient, for the lesson on
backward and the graph.
The loss is known to the learner, `((w * x - y) ** 2).sum()`, so its chain rule can be done
by hand, its vector of errors can be backpropagated with `gradient=`, and its prediction
`w * x` is an intermediate whose gradient `retain_grad()` can keep.

Besides what came back (and whether the learner's own arithmetic made it, or autograd did:
`trace.Calls.origin`) and what `w.grad` holds, it observes how often autograd computed a
gradient for `w` at all (by `backward()` or `torch.autograd.grad`), and it turns PyTorch's
errors about the graph (a non-scalar without `gradient=`, a loss cut off from `w`, a graph
already freed ...) into facts instead of errors.

`cases`, `reference` and `observe` run in the worker and import torch there; `facts` and
`columns` are pure and run in the tutor's process.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gradtutor.checking.checkers.common import close, computed_by, flat, fmt, nest, signed
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.grad_reading import backward_runs, plain, ran

SHAPES: tuple[tuple[int, ...], ...] = ((2,), (3,), (4,), (5,), (2, 3))

# PyTorch's errors about the graph, by the fact `error-kind` they become: a part of the message
# that names the mistake. Any other error is the learner's code failing, as usual.
GRAPH_ERRORS: Mapping[str, str] = {
    "not-scalar": "grad can be implicitly created only for scalar outputs",
    "no-grad-fn": "does not require grad and does not have a grad_fn",
    "shape-mismatch": "Mismatch in shape",
    "graph-freed": "Trying to backward through the graph a second time",
    "not-in-graph": "appears to not have been used in the graph",
}

NAMES = frozenset({
    "w", "x", "y", "gradient", "outer-slope", "inner-slope", "errors", "loss", "size",
    "backward-count", "ran", "autograd-count", "error", "error-kind", "returned",
    "returned-kind", "returned-is-grad", "returned-scale", "returned-computed",
    "returned-computed-by", "grad-after", "grad-after-kind",
    "grad-after-scale", "backward-from-size", "autograd-grad-count"})


def cases(seed: int) -> list[dict[str, Any]]:
    """Four inputs of different shapes. No entry of `x` or `y` is near zero, nor any error
    `w * x - y`, so the gradient, the error's slope and their multiples always differ."""
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)

    def number() -> float:
        return signed(rng, 0.3, 2.0, 2)

    shapes = rng.sample(SHAPES, k=4)
    out = []
    for dims in shapes:
        w, x, y = [], [], []
        for _ in range(math.prod(dims)):
            w_i, x_i = number(), number()
            while abs(x_i - 1) < 0.1:  # x = 1 would make the error's slope the gradient
                x_i = number()
            y_i = number()
            while abs(w_i * x_i - y_i) < 0.25:
                y_i = number()
            w.append(w_i)
            x.append(x_i)
            y.append(y_i)
        out.append({"w": nest(w, dims), "x": nest(x, dims), "y": nest(y, dims)})
    return out


def _inputs(case: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The case's fresh leaf `w`, and `x` and `y`, which need no gradient (worker side)."""
    import torch

    return (torch.tensor(case["w"], dtype=torch.float64, requires_grad=True),
            torch.tensor(case["x"], dtype=torch.float64),
            torch.tensor(case["y"], dtype=torch.float64))


def reference(case: dict[str, Any]) -> dict[str, Any]:
    """The true gradient by autograd, and the pieces of the chain rule (real torch)."""
    import torch

    w, x, y = _inputs(case)
    pred = w * x
    errors = (pred - y) ** 2
    loss = errors.sum()
    (grad,) = torch.autograd.grad(loss, w)
    return {"grad": grad.tolist(), "outer": (2 * (pred - y)).detach().tolist(),
            "errors": errors.detach().tolist(), "loss": loss.item()}


def observe(case: dict[str, Any], fn: Any, trace: Any, catches: tuple[str, ...]
            ) -> dict[str, Any]:
    """Call `fn(w, x, y)`; what it returned, `w.grad` afterwards, the backward passes that
    reached `w` (the trace's hook) and every gradient autograd computed for `w` (a hook of
    our own, which `torch.autograd.grad` sets off too), and how often the function called
    `torch.autograd.grad` (`trace.Calls`). Every error of `GRAPH_ERRORS` is caught, whatever
    `catches` says: in this family they are the mistakes to name."""
    import torch

    from gradtutor.checking.trace import Calls, real_grad

    w, x, y = _inputs(case)
    trace.watch({"w": w})
    computed: list[int] = []
    task_id = torch._C._current_graph_task_id  # -1 outside a backward pass

    def count(grad: Any) -> None:
        if task_id() != -1:  # only autograd's engine counts, not a call by hand
            computed.append(1)

    w.register_hook(count)
    calls = Calls()
    try:
        with calls:
            returned = fn(w, x, y)
    except RuntimeError as exc:
        said = str(exc)
        kind = next((name for name, part in GRAPH_ERRORS.items() if part in said), None)
        if kind is None:
            raise
        first = said.strip().splitlines()[0]
        end = first.find(". ")
        return {"caught": kind, "said": first[:end + 1] if end > 0 else first,
                "events": list(trace.events), "computed": len(computed),
                "autograd_grads": calls.autograd_grads}
    return {"returned": plain(trace, returned),
            "returned_origin": calls.origin(returned) if trace.is_tensor(returned) else None,
            "returned_is_grad": returned is not None and returned is real_grad(w),
            "grad_after": trace.values(real_grad(w)), "events": list(trace.events),
            "computed": len(computed), "autograd_grads": calls.autograd_grads}


def scale(values: Any, grad: Any) -> float | None:
    """k when `values` is k times the gradient (to 3 decimals), else None."""
    got, want = flat(values), flat(grad)
    if got is None or want is None or len(got) != len(want) or not isinstance(values, list):
        return None
    norm = sum(g * g for g in want)
    k = sum(a * g for a, g in zip(got, want, strict=True)) / norm if norm else 0.0
    scaled = [k * g for g in want]
    return round(k, 3) if close(got, scaled, rtol=1e-4, atol=1e-6) else None


def facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
          parts: tuple[str, ...]) -> dict[str, Any]:
    """Every fact a check may name, from plain data (tutor side)."""
    runs = backward_runs(observed)
    caught = observed.get("caught")
    out: dict[str, Any] = {
        "w": case["w"], "x": case["x"], "y": case["y"], "gradient": reference["grad"],
        "outer-slope": reference["outer"], "inner-slope": case["x"],
        "errors": reference["errors"], "loss": reference["loss"],
        "size": len(flat(case["w"]) or ()),
        "backward-count": runs, "ran": ran(runs), "autograd-count": observed["computed"],
        "autograd-grad-count": observed.get("autograd_grads", 0),
        "backward-from-size": next((e.get("entries") for e in observed["events"]
                                    if e.get("event") == "backward"), None),
        "error-kind": caught,
        "error": f"RuntimeError: {observed['said']}" if caught else None,
    }
    if caught:
        return out
    computed = computed_by(observed.get("returned_origin"))
    out.update({"returned": observed["returned"],
                "returned-computed": computed is not None, "returned-computed-by": computed,
                "returned-is-grad": observed["returned_is_grad"],
                "grad-after": observed["grad_after"]})
    for name in ("returned", "grad-after"):
        value = out[name]
        out[f"{name}-kind"] = (value.get("not_a_tensor", "object") if isinstance(value, dict)
                               else None)
        out[f"{name}-scale"] = scale(value, reference["grad"])
    return out


def columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("w", "x", "y"), (fmt(case["w"], 3), fmt(case["x"], 3), fmt(case["y"], 3))


FAMILY = Family(arity=3, names=lambda parts: NAMES, cases=cases, reference=reference,
                observe=observe, facts=facts, columns=columns)
