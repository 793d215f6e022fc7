"""The input family `clip-step`, `fn(model, optimizer, loss_fn, x, y, max_norm)`: one
training step with gradient clipping; the gradient the optimizer's step used, when the
function clipped (before backward, between backward and the step, after the step) and what
the clip measured, and what the function returned.

On the small seeded model of `model_facts.py`, split between worker and tutor as it says.
"""

from __future__ import annotations

import math
from typing import Any

from gradtutor.checking.checkers.common import close, flat
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.model_facts import (
    BOTH_LOSSES,
    as_number,
    batch,
    both_losses,
    build_model,
    kind_of,
    loss_of,
    model_spec,
    returned_fact,
)
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

# ---- clip-step: fn(model, optimizer, loss_fn, x, y, max_norm) --------------------------------

# Each case scales max_norm from the gradient's own total norm: most clip, one does not.
CLIP_FACTORS = ((0.2, 0.6), (0.2, 0.6), (1.5, 3.0))


def clip_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    out = []
    for (low, high), classes in zip(CLIP_FACTORS, both_losses(rng, len(CLIP_FACTORS)),
                                    strict=True):
        spec = model_spec(rng, classes=classes)
        spec.update(optimizer=rng.choice(("sgd", "momentum", "adam")),
                    lr=round(rng.uniform(0.01, 0.1), 3),
                    factor=round(rng.uniform(low, high), 3))
        out.append(spec)
    rng.shuffle(out)
    return out


def _clip_setup(case: dict[str, Any]) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
    """Model, optimizer, loss, batch; each parameter's .grad holds a leftover gradient."""
    import torch

    model, gen = build_model(case)
    x, y = batch(case, gen)
    params = list(model.parameters())
    optimizer = (torch.optim.Adam(params, lr=case["lr"]) if case["optimizer"] == "adam" else
                 torch.optim.SGD(params, lr=case["lr"],
                                 momentum=0.9 if case["optimizer"] == "momentum" else 0.0))
    leftovers = {}
    for name, p in model.named_parameters():
        stale = torch.randn(p.shape, generator=gen)
        vars(torch._C.TensorBase)["grad"].__set__(p, stale.clone())  # no backward, no event
        leftovers[name] = stale
    return model, optimizer, loss_of(case), x, y, leftovers


def _true_gradient(model: Any, loss_fn: Any, x: Any, y: Any) -> tuple[float, list[Any]]:
    """The loss and d(loss)/d(each parameter), leaving .grad alone."""
    import torch

    loss = loss_fn(model(x), y)
    return loss.detach().item(), list(torch.autograd.grad(loss, list(model.parameters())))


def _total_norm(grads: list[Any]) -> float:
    """The 2-norm of all the gradients taken as one vector, as clip_grad_norm_ measures it."""
    import torch

    norms = torch.stack([torch.linalg.vector_norm(g) for g in grads])
    total: float = torch.linalg.vector_norm(norms).item()
    return total


def _max_norm(case: dict[str, Any], total: float) -> float:
    return round(total * float(case["factor"]), 4)


def clip_reference(case: dict[str, Any]) -> dict[str, Any]:
    """The true gradient, its total norm, max_norm, and the gradients a step could use: clipped
    (right), as it is, clipped parameter by parameter, or with the leftovers added."""
    import torch

    model, _, loss_fn, x, y, leftovers = _clip_setup(case)
    loss, grads = _true_gradient(model, loss_fn, x, y)
    total = _total_norm(grads)
    max_norm = _max_norm(case, total)

    def clipped(gs: list[Any]) -> list[Any]:
        coef = min(1.0, max_norm / (_total_norm(gs) + 1e-6))
        return [g * coef for g in gs]

    def vector(gs: list[Any]) -> list[float]:
        return torch.cat([g.reshape(-1) for g in gs]).tolist()

    with_left = [g + left for g, left in zip(grads, leftovers.values(), strict=True)]
    return {"loss": loss, "norm": total, "max_norm": max_norm, "raw": vector(grads),
            "clipped": vector(clipped(grads)),
            "each": vector([g for one in grads for g in clipped([one])]),
            "with_leftovers": vector(with_left), "clipped_with_leftovers":
            vector(clipped(with_left)), "names": list(leftovers)}


def observe_clip(case: dict[str, Any], fn: Any, trace: Any,
                 catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """Call fn on a model whose .grad holds leftovers; read what its first step used (the
    gradients optimizer.step() read, from the trace), and what it returned."""
    model, optimizer, loss_fn, x, y, _ = _clip_setup(case)
    named = dict(model.named_parameters())
    _, grads = _true_gradient(model, loss_fn, x, y)
    max_norm = _max_norm(case, _total_norm(grads))
    trace.watch(named)
    start = len(trace.events)
    returned = fn(model, optimizer, loss_fn, x, y, max_norm)
    events = trace.events[start:]
    used = next((e["grads"] for e in events if e.get("event") == "before_step"), None)
    step_grads: list[float] | None = None
    if used is not None:
        step_grads = []
        for name in named:
            values = flat(used.get(name))
            if values is None:
                step_grads = None
                break
            step_grads += values
    return {"returned": returned_fact(trace, returned), "step_grads": step_grads,
            "clipped": _when_clipped(events),
            "clip_measured": next((e.get("total") for e in events if e.get("event") == "clip"),
                                  None),
            "backward": sum(e.get("event") == "backward" for e in events),
            "zero_grad": sum(e.get("event") == "zero_grad" for e in events),
            "steps": sum(e.get("event") == "step" for e in events)}


def _when_clipped(events: list[dict[str, Any]]) -> str:
    """When the function first called clip_grad_norm_: 'before-backward' (before any backward
    pass, when .grad held none of this batch's gradient), 'after-step' (once the step had used
    the gradient), 'between' them, or 'never'."""
    kinds = [e.get("event") for e in events]
    if "clip" not in kinds:
        return "never"
    clip = kinds.index("clip")
    if "backward" not in kinds[:clip]:
        return "before-backward"
    return "after-step" if "step" in kinds[:clip] else "between"


def _norm(values: list[float] | None) -> float | None:
    return math.sqrt(sum(v * v for v in values)) if values is not None else None


def clip_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
               parts: tuple[str, ...]) -> dict[str, Any]:
    used = observed["step_grads"]
    returned = observed["returned"]
    norm, max_norm = reference["norm"], reference["max_norm"]
    return {
        "backward-count": observed["backward"], "zero-grad-count": observed["zero_grad"],
        "step-count": observed["steps"],
        "step-grads": used, "step-grads-norm": _norm(used),
        "clipped-grads": reference["clipped"], "raw-grads": reference["raw"],
        "kept-leftovers": used is not None and (
            close(used, reference["with_leftovers"])
            or close(used, reference["clipped_with_leftovers"])),
        "clipped-each": used is not None and not close(used, reference["clipped"])
        and close(used, reference["each"]),
        "unclipped": used is not None and norm > max_norm and close(used, reference["raw"]),
        "clipping-needed": norm > max_norm,
        "norm-before": norm, "norm-after": min(norm, max_norm), "max-norm": max_norm,
        "loss": reference["loss"],
        "clipped": observed.get("clipped"),
        "clip-measured": as_number(observed.get("clip_measured")),
        "returned": as_number(returned) if as_number(returned) is not None else returned,
        "returned-kind": kind_of(returned),
    }


CLIP_NAMES = frozenset({
    "backward-count", "zero-grad-count", "step-count", "step-grads", "step-grads-norm",
    "clipped-grads", "raw-grads", "kept-leftovers", "clipped-each", "unclipped",
    "clipping-needed", "norm-before", "norm-after", "max-norm", "loss", "clipped",
    "clip-measured", "returned", "returned-kind"})


def _short(value: float | None) -> str:
    return "None" if value is None else f"{value:.4g}"


def clip_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (("loss_fn", "optimizer"),
            ("CrossEntropyLoss" if case["loss"] == "cross-entropy" else "MSELoss",
             {"sgd": "SGD", "momentum": "SGD(momentum=0.9)", "adam": "Adam"}[case["optimizer"]]))


def norms_table(case: dict[str, Any], reference: dict[str, Any],
                observed: dict[str, Any]) -> Table:
    """The norms a clipping step is about: before, max_norm, what the step used, returned."""
    returned = as_number(observed["returned"])
    return Table((msg("total norm before clipping"), "max_norm", msg("norm the step used"),
                  msg("after clipping, it should be"), msg("you returned")),
                 ((_short(reference["norm"]), _short(reference["max_norm"]),
                   _short(_norm(observed["step_grads"])),
                   _short(min(reference["norm"], reference["max_norm"])),
                   _short(returned) if returned is not None else
                   str(kind_of(observed["returned"]))),), frozenset({0}))


FAMILY = Family(arity=6, names=lambda parts: CLIP_NAMES, cases=clip_cases,
                reference=clip_reference, observe=observe_clip, facts=clip_facts,
                columns=clip_columns, tables={"norms": norms_table},
                fixed={**BOTH_LOSSES,
                       "clips": lambda drawn: any(case["factor"] < 1 for case in drawn),
                       "does-not-clip": lambda drawn: any(case["factor"] > 1 for case in drawn)})
