"""The input family `evaluation`, `fn(model, loss_fn, batches)`: how each forward pass ran
(train or eval mode, recording a graph or not), the mode left behind, the batch-norm
statistics, the number returned.

On the small seeded model of `model_facts.py`, split between worker and tutor as it says.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.model_facts import (
    BOTH_LOSSES,
    as_number,
    batch,
    both_losses,
    c_attribute,
    kind_of,
    loss_of,
    model_spec,
    param_snapshot,
    params_moved,
    returned_fact,
)

# ---- evaluation: fn(model, loss_fn, batches) on a model with batch norm and dropout -----------

def eval_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    out = []
    for classes in both_losses(rng, 3):
        spec = model_spec(rng, layers=2, classes=classes)
        spec["batches"] = rng.randint(2, 4)
        out.append(spec)
    return out


def _eval_setup(case: dict[str, Any]) -> tuple[Any, Any, list[tuple[Any, Any]]]:
    """Linear, BatchNorm1d, ReLU, Dropout(0.5), Linear in training mode, its running statistics
    already moved by a few batches; the loss and the batches to evaluate on."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(case["seed"])
    n_in, hidden, n_out = case["sizes"]
    model = nn.Sequential(nn.Linear(n_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                          nn.Dropout(0.5), nn.Linear(hidden, n_out))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.8)
        for _ in range(3):  # dropout comes after batch norm: its statistics are seeded alone
            model[1](model[0](torch.randn(6, n_in, generator=gen) * 2 + 1))
    model.train()
    return model, loss_of(case), [batch(case, gen) for _ in range(case["batches"])]


def eval_reference(case: dict[str, Any]) -> dict[str, Any]:
    import torch

    model, loss_fn, batches = _eval_setup(case)
    model.eval()
    with torch.no_grad():
        losses = [float(loss_fn(model(x), y)) for x, y in batches]
    return {"losses": losses}


def observe_eval(case: dict[str, Any], fn: Any, trace: Any,
                 catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """Call fn; a forward hook on the model records, for each forward pass, whether the model
    was in training mode and whether its output recorded a graph."""
    import torch

    model, loss_fn, batches = _eval_setup(case)
    params = list(model.parameters())
    modules = list(model.modules())
    norm = model[1]
    stats = [norm.running_mean.clone(), norm.running_var.clone()]
    before = param_snapshot(params)
    forwards: list[dict[str, bool]] = []
    is_tensor = trace.is_tensor
    requires = c_attribute("requires_grad")

    def hook(module: Any, args: Any, output: Any) -> None:
        forwards.append({"training": vars(module).get("training") is True,
                         "graph": bool(is_tensor(output) and requires(output))})

    handle = model.register_forward_hook(hook)
    start = len(trace.events)
    torch.manual_seed(case["seed"])  # dropout in training mode draws the same masks each run
    try:
        returned = fn(model, loss_fn, batches)
    finally:
        handle.remove()
    modes = {vars(m).get("training") is True for m in modules}
    return {"returned": returned_fact(trace, returned),
            "returned_tensor": trace.is_tensor(returned), "forwards": forwards,
            "mode_after": "train" if modes == {True} else "eval" if modes == {False}
            else "mixed",
            "stats_changed": not (torch.equal(norm.running_mean, stats[0])
                                  and torch.equal(norm.running_var, stats[1])),
            "weights_moved": any(params_moved(params, before)),
            "backward": sum(e.get("event") == "backward" for e in trace.events[start:])}


def eval_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
               parts: tuple[str, ...]) -> dict[str, Any]:
    losses = reference["losses"]
    forwards = observed["forwards"]
    returned = observed["returned"]
    return {
        "forward-count": len(forwards), "batch-count": len(losses),
        "forward-in-train-mode": any(f["training"] for f in forwards),
        "graph-built": any(f["graph"] for f in forwards),
        "mode-after": observed["mode_after"], "stats-changed": observed["stats_changed"],
        "weights-moved": observed["weights_moved"], "backward-count": observed["backward"],
        "mean-loss": sum(losses) / len(losses), "loss-sum": sum(losses),
        "last-batch-loss": losses[-1],
        "returned": as_number(returned) if as_number(returned) is not None else returned,
        # a one-number tensor reads as its number; the prompt asks for a Python float
        "returned-kind": "tensor" if observed.get("returned_tensor") else kind_of(returned),
    }


EVAL_NAMES = frozenset({
    "forward-count", "batch-count", "forward-in-train-mode", "graph-built", "mode-after",
    "stats-changed", "weights-moved", "backward-count", "mean-loss", "loss-sum",
    "last-batch-loss", "returned", "returned-kind"})


def eval_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (("batches", "loss_fn"),
            (str(case["batches"]),
             "CrossEntropyLoss" if case["loss"] == "cross-entropy" else "MSELoss"))


FAMILY = Family(arity=3, names=lambda parts: EVAL_NAMES, cases=eval_cases,
                reference=eval_reference, observe=observe_eval, facts=eval_facts,
                columns=eval_columns, fixed=BOTH_LOSSES)
