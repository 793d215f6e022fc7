"""The `training` input family (`FAMILY`, registered in `families.py`), and what the
training-loop checkers share: small models, optimizers and batches built from plain cases
(worker side), and arithmetic on plain gradient lists (judge side, no torch).

A case names everything (`seed`, sizes, loss, optimizer, param groups), so the reference and
the observation build identical, fresh objects from it with a `torch.Generator`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random

from gradtutor.checking.checkers.common import close, count, flat, fmt
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

# Mean-reduced losses of (prediction, target), by name.
LOSSES = ("mse", "l1", "smooth-l1", "huber", "cross-entropy")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
ORDINALS = (msg("first"), msg("second"), msg("third"), msg("fourth"), msg("fifth"),
            msg("sixth"))


def model_case(rng: random.Random, groups: int | None = None,
               loss: str | None = None) -> dict[str, Any]:
    """A plain description of a model, its loss (`loss`, else drawn) and its optimizer."""
    loss = loss if loss is not None else rng.choice(LOSSES)
    return {
        "seed": rng.randrange(2**31),
        "arch": rng.choice(("linear", "mlp")),
        "inputs": rng.randint(2, 4),
        "hidden": rng.randint(2, 4),
        "outputs": rng.randint(2, 3) if loss == "cross-entropy" else rng.randint(1, 3),
        "loss": loss,
        "optimizer": rng.choice(OPTIMIZERS),
        "lr": round(rng.uniform(0.01, 0.2), 3),
        "groups": groups if groups is not None else rng.choice((1, 2)),
    }


@dataclass
class Setup:
    """The fresh objects one case is run on (worker side)."""

    model: Any
    optimizer: Any
    loss_fn: Any
    batches: list[tuple[Any, Any]]
    leftovers: dict[str, Any]  # name -> the stale gradient put in .grad, if the case has them

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model.named_parameters())


def build(case: dict[str, Any], count: int, size: int) -> Setup:
    """Model, optimizer, loss and `count` batches of `size` rows; leftovers in .grad if asked."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(case["seed"])
    dtype = torch.float64
    n_in, hidden, n_out = case["inputs"], case["hidden"], case["outputs"]
    model: nn.Module = (nn.Linear(n_in, n_out) if case["arch"] == "linear" else
                        nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(),
                                      nn.Linear(hidden, n_out)))
    model = model.to(dtype)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype) * 0.7)
    batches = []
    for _ in range(count):
        x = torch.randn(size, n_in, generator=gen, dtype=dtype)
        if case["loss"] == "cross-entropy":
            y = torch.randint(0, n_out, (size,), generator=gen)
        else:
            y = torch.randn(size, n_out, generator=gen, dtype=dtype)
        batches.append((x, y))
    losses: dict[str, Callable[[], nn.Module]] = {
        "mse": nn.MSELoss, "l1": nn.L1Loss, "smooth-l1": lambda: nn.SmoothL1Loss(beta=0.5),
        "huber": lambda: nn.HuberLoss(delta=0.7), "cross-entropy": nn.CrossEntropyLoss}
    loss_fn = losses[case["loss"]]()
    params = list(model.parameters())
    groups: list[dict[str, Any]] = (
        [{"params": params}] if case["groups"] == 1 else
        [{"params": params[:1]}, {"params": params[1:], "lr": case["lr"] / 2}])
    lr = case["lr"]
    optimizers: dict[str, Callable[[], torch.optim.Optimizer]] = {
        "sgd": lambda: torch.optim.SGD(groups, lr=lr),
        "momentum": lambda: torch.optim.SGD(groups, lr=lr, momentum=0.9),
        "adam": lambda: torch.optim.Adam(groups, lr=lr),
        "adamw": lambda: torch.optim.AdamW(groups, lr=lr, weight_decay=0.05)}
    optimizer = optimizers[case["optimizer"]]()
    # Drawn for every case so the data above never depends on whether leftovers are used.
    stale = {name: torch.randn(p.shape, generator=gen, dtype=dtype)
             for name, p in model.named_parameters()}
    leftovers: dict[str, Any] = {}
    if case.get("leftovers"):
        for name, p in model.named_parameters():
            p.grad = stale[name].clone()  # set directly: no backward, no event in the trace
            leftovers[name] = stale[name]
    return Setup(model, optimizer, loss_fn, batches, leftovers)


def grads_of(loss: Any, params: dict[str, Any]) -> dict[str, Any]:
    """d(loss)/d(each parameter) as plain lists, leaving every .grad alone."""
    import torch

    grads = torch.autograd.grad(loss, list(params.values()))
    return {name: g.tolist() for name, g in zip(params, grads, strict=True)}


def kept_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events the loop judges read (forward events are noise to them)."""
    return [e for e in events if e.get("event") != "forward"]


# --- judge side: plain lists only -----------------------------------------------------------

Vector = list[float]


def join(grads: dict[str, Any] | None, names: list[str]) -> Vector | None:
    """The named gradients as one flat vector, in `names` order; None if any is missing."""
    if grads is None:
        return None
    out: Vector = []
    for name in names:
        values = flat(grads.get(name))
        if values is None:
            return None
        out += values
    return out


def add(a: Vector, b: Vector) -> Vector:
    return [x + y for x, y in zip(a, b, strict=True)]


def sub(a: Vector, b: Vector) -> Vector:
    return [x - y for x, y in zip(a, b, strict=True)]


def scale(a: Vector, k: float) -> Vector:
    return [k * x for x in a]


def norm(a: Vector) -> float:
    return math.sqrt(sum(x * x for x in a))


def multiple(a: Vector | None, b: Vector | None) -> float | None:
    """k when `a` is (close to) k times `b`, else None."""
    if a is None or b is None or len(a) != len(b):
        return None
    bb = sum(y * y for y in b)
    if bb == 0 or not all(math.isfinite(x) for x in a):
        return None
    k = sum(x * y for x, y in zip(a, b, strict=True)) / bb
    return k if close(a, scale(b, k)) else None


def near(k: float | None, target: float) -> bool:
    return k is not None and abs(k - target) <= 1e-4 * max(1.0, abs(target))


def times(k: float) -> str:
    """A factor as a learner reads it: 4, 0.25, 1.5."""
    return f"{k:.3g}"


def ordinal(i: int) -> str:
    """0 -> 'first'."""
    return ORDINALS[i] if i < len(ORDINALS) else f"#{i + 1}"


def per_param_table(names: list[str], columns: tuple[str, ...],
                    *grads: dict[str, Any] | None,
                    against: tuple[int, int] | None = None) -> Table:
    """One row per parameter: its name, then each gradient in short form. `columns` are
    messages. With `against` (i, j), a parameter whose gradient in `grads[i]` is not that of
    `grads[j]` is a failing row."""
    def value(g: dict[str, Any] | None, name: str) -> Any:
        return g.get(name) if g is not None else None

    rows = tuple((name, *(fmt(value(g, name)) for g in grads)) for name in names)
    failing: frozenset[int] = frozenset()
    if against is not None:
        i, j = against
        failing = frozenset(k for k, name in enumerate(names)
                            if not _same(value(grads[i], name), value(grads[j], name)))
    return Table((msg("parameter"), *columns), rows, failing)


def _same(got: Any, want: Any) -> bool:
    return got is not None and want is not None and close(got, want)


def usable(observed: list[dict[str, Any]]) -> list[int]:
    """Indexes of cases that ran to the end (the runner reports the others as errors)."""
    return [i for i, o in enumerate(observed) if "error" not in o]


def loop_cases(seed: int, count_key: str, how_many: int = 3) -> list[dict[str, Any]]:
    """Cases for the training-loop checkers: 2-5 (micro-)batches under `count_key`, one case
    without leftover gradients, one with two param groups, and one whose loss is
    cross-entropy, the loss whose two arguments cannot be swapped (the others are symmetric:
    `loss_fn(y, pred)` for `loss_fn(pred, y)` must fail on every seed, not only on those
    that happen to draw it)."""
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)
    fresh, grouped = rng.sample(range(how_many), 2)
    classed = rng.randrange(how_many)
    out = []
    for i in range(how_many):
        case = model_case(rng, groups=2 if i == grouped else None,
                          loss="cross-entropy" if i == classed else None)
        case.update({count_key: rng.randint(2, 5), "rows": rng.randint(1, 4),
                     "leftovers": i != fresh})
        out.append(case)
    return out


# ---- the `training` family: fn(model, optimizer, loss_fn, batches) ------------------------
#
# The function trains a model: it gets the model, an optimizer over its parameters (one or two
# param groups), a mean-reduced loss and 2-5 equal-sized batches, while .grad may still hold
# leftover gradients. The trace records every backward pass that reached a parameter, every
# zero_grad() and optimizer step, and the gradient each step read from .grad; the facts below
# are read from those events. A function that takes exactly one step (gradient accumulation,
# a single training step) also gets facts on the gradient that step used; an exercise on a
# whole loop would add facts on each step, from the same events.

FAMILY_CASES = 3


def cases(seed: int) -> list[dict[str, Any]]:
    """Three cases of 2-5 batches: one without leftovers, one with two param groups."""
    return loop_cases(seed, "batches", FAMILY_CASES)


def setup(case: dict[str, Any]) -> Setup:
    return build(case, case["batches"], case["rows"])


def reference(case: dict[str, Any]) -> dict[str, Any]:
    """What the inputs themselves say (with torch): the parameters' names, the leftovers put in
    .grad, and, at the starting weights, the gradient of each batch's loss and of the mean
    loss over all the batches taken as one batch."""
    import torch

    s = setup(case)
    params = s.params
    x = torch.cat([xb for xb, _ in s.batches])
    y = torch.cat([yb for _, yb in s.batches])
    return {
        "names": list(params),
        "leftovers": {name: g.tolist() for name, g in s.leftovers.items()} or None,
        "mean": grads_of(s.loss_fn(s.model(x), y), params),
        "batches": [grads_of(s.loss_fn(s.model(xb), yb), params) for xb, yb in s.batches],
    }


def observe(case: dict[str, Any], fn: Any, trace: Any,
            catches: tuple[str, ...] = ()) -> dict[str, Any]:
    s = setup(case)
    trace.watch(s.params)
    fn(s.model, s.optimizer, s.loss_fn, s.batches)
    return {"events": kept_events(trace.events)}


def _backward_counts(events: list[dict[str, Any]], names: list[str]) -> list[int]:
    """How many backward passes reached each parameter (autograd's own accumulations: a
    replaced Tensor.backward that writes .grad itself makes none)."""
    reached = [e.get("param") for e in events if e.get("event") == "accumulate"]
    return [reached.count(name) for name in names]


def facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
          parts: tuple[str, ...]) -> dict[str, Any]:
    """What a check may name of one case: counts and order of the backward passes, clears and
    steps; with exactly one step, what the gradient it used was."""
    names = reference["names"]
    events = observed["events"]
    steps = [i for i, e in enumerate(events) if e.get("event") == "before_step"]
    first = steps[0] if steps else len(events)
    counts = _backward_counts(events, names)
    found: dict[str, Any] = {
        "batch-count": case["batches"], "batch-fraction": 1 / case["batches"],
        "leftovers": bool(case["leftovers"]),
        "step-count": len(steps), "zero-grad-count": count(events, "zero_grad"),
        "backward-count": max(counts), "backward-fewest": min(counts),
        "backward-before-first-step": max(_backward_counts(events[:first], names)),
        "backward-after-first-step": max(_backward_counts(events[first:], names)),
    }
    if len(steps) == 1:
        found.update(_the_step(case, reference, events[first]["grads"]))
    return found


def _the_step(case: dict[str, Any], reference: dict[str, Any],
              used_grads: dict[str, Any]) -> dict[str, Any]:
    """The gradient a function's only step used, against the whole-batch mean gradient and
    the last batch's; with the leftovers taken out when they explain it."""
    names = reference["names"]
    n = case["batches"]
    found: dict[str, Any] = {"step-missing": None, "step-times": None,
                             "step-last-batch": False}
    if case["leftovers"]:
        found["step-used-leftovers"] = False
    used = join(used_grads, names)
    if used is None:
        found["step-missing"] = ", ".join(name for name in names
                                          if used_grads.get(name) is None)
        return found
    mean, last = join(reference["mean"], names), join(reference["batches"][-1], names)
    assert mean is not None and last is not None

    def explained(v: Vector) -> bool:
        return multiple(v, mean) is not None or multiple(v, last) is not None

    own = used
    leftovers = join(reference["leftovers"], names)
    if leftovers is not None and not explained(used) and explained(sub(used, leftovers)):
        own = sub(used, leftovers)
        found["step-used-leftovers"] = True
    k = multiple(own, mean)
    if k is None:
        found["step-last-batch"] = multiple(own, last) is not None
    else:  # exactly the factor a condition names, when it is within the tolerance of one
        found["step-times"] = next((t for t in (1.0, 0.0, float(n), 1 / n) if near(k, t)), k)
    return found


NAMES = frozenset({"batch-count", "batch-fraction", "leftovers", "step-count",
                   "zero-grad-count", "backward-count", "backward-fewest",
                   "backward-before-first-step", "backward-after-first-step", "step-missing",
                   "step-times", "step-last-batch", "step-used-leftovers"})


def _step_grads(observed: dict[str, Any]) -> dict[str, Any] | None:
    """The gradients the first step read from .grad, by parameter name."""
    step = next((e for e in observed["events"] if e.get("event") == "before_step"), None)
    return step["grads"] if step is not None else None


def step_table(case: dict[str, Any], reference: dict[str, Any],
               observed: dict[str, Any]) -> Table:
    """Per parameter: the gradient the step used, and the whole-batch mean gradient."""
    return per_param_table(reference["names"], (msg("your step used"),
                                                msg("mean gradient of the whole batch")),
                           _step_grads(observed), reference["mean"], against=(0, 1))


def leftovers_table(case: dict[str, Any], reference: dict[str, Any],
                    observed: dict[str, Any]) -> Table:
    """Per parameter: the leftover .grad, the gradient the step used, and the right one."""
    return per_param_table(reference["names"], (msg("leftover .grad before your call"),
                                                msg("your step used"), msg("should have used")),
                           reference["leftovers"], _step_grads(observed), reference["mean"],
                           against=(1, 2))


FAMILY = Family(
    arity=4, names=lambda parts: NAMES, cases=cases, reference=reference, observe=observe,
    facts=facts, tables={"step-gradient": step_table, "step-leftovers": leftovers_table})
