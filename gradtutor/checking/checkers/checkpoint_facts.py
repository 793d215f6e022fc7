"""The input family `checkpoint`, `fn(model, optimizer, f)`: what was written to the file
object `f`, whether `torch.load(..., weights_only=True)` reads it, and whether a fresh model
and optimizer loaded from it go on training exactly as the originals do.

On the small seeded model of `model_facts.py`, split between worker and tutor as it says.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.model_facts import (
    batch,
    build_model,
    kind_of,
    loss_of,
    model_spec,
    param_snapshot,
    params_moved,
    returned_fact,
)
from gradtutor.i18n import msg

# ---- checkpoint: fn(model, optimizer, f), then a fresh model and optimizer resume from f ------

def checkpoint_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    out = []
    for optimizer in ("momentum", "adam", rng.choice(("momentum", "adam"))):
        spec = model_spec(rng)
        spec.update(optimizer=optimizer, lr=round(rng.uniform(0.01, 0.1), 3))
        out.append(spec)
    return out


def _trained(case: dict[str, Any], seed: int | None = None) -> tuple[Any, Any, list[Any]]:
    """A model and its optimizer; with the case's own seed, after two training steps, so the
    optimizer holds state (momentum, or Adam's running averages). Also the batches."""
    import torch

    model, gen = build_model(case, seed)
    data_gen = torch.Generator().manual_seed(case["seed"] + 1)
    batches = [batch(case, data_gen) for _ in range(3)]
    params = list(model.parameters())
    optimizer = (torch.optim.Adam(params, lr=case["lr"]) if case["optimizer"] == "adam" else
                 torch.optim.SGD(params, lr=case["lr"], momentum=0.9))
    if seed is None:
        for x, y in batches[:2]:
            _train_step(case, model, optimizer, x, y)
    return model, optimizer, batches


def _train_step(case: dict[str, Any], model: Any, optimizer: Any, x: Any, y: Any) -> None:
    optimizer.zero_grad()
    loss_of(case)(model(x), y).backward()
    optimizer.step()


def checkpoint_reference(case: dict[str, Any]) -> dict[str, Any]:
    model, _, _ = _trained(case)
    return {"names": [name for name, _ in model.named_parameters()]}


def _said(exc: BaseException) -> str:
    """An error in a few words: its type and the first sentence, control characters out."""
    text = "".join(ch for ch in str(exc) if ch.isprintable() or ch == "\n")
    first = text.strip().splitlines()[0] if text.strip() else ""
    for mark in ("[1m", "[0m"):  # the bold of torch's weights_only message
        first = first.replace(mark, "")
    end = first.find(". ")
    first = first[:end + 1] if end > 0 else first
    return f"{type(exc).__name__}: {first[:160]}"


def observe_checkpoint(case: dict[str, Any], fn: Any, trace: Any,
                       catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """Call fn(model, optimizer, f) with an in-memory file; read it back with torch.load
    (weights_only, the default); load a fresh model and optimizer from it the usual way; then
    take one training step with both pairs and compare the weights."""
    import io

    import torch

    model, optimizer, batches = _trained(case)
    params = list(model.parameters())
    before = param_snapshot(params)
    f = io.BytesIO()
    returned = fn(model, optimizer, f)
    seen: dict[str, Any] = {"returned": returned_fact(trace, returned),
                            "weights_moved": any(params_moved(params, before)),
                            "names": [name for name, _ in model.named_parameters()]}
    try:
        data = f.getvalue()
    except ValueError:  # the function closed the file
        data = b""
    seen["bytes"] = len(data)
    if not data:
        return {**seen, "load_error": None}
    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as exc:
        return {**seen, "load_error": _said(exc)}
    seen.update(load_error=None, saved_type=type(loaded).__name__)
    if not isinstance(loaded, dict):
        return seen
    keys = [str(key) for key in dict.keys(loaded)]
    seen.update(keys=keys[:6], key_count=len(keys))
    restored, restored_opt, _ = _trained(case, seed=case["seed"] + 2)
    for key, target in (("model", restored), ("optimizer", restored_opt)):
        if key not in keys:
            continue
        try:
            target.load_state_dict(loaded[key])
        except Exception as exc:
            seen[f"{key}_error"] = _said(exc)
    restored_params = list(restored.parameters())
    seen["model_restored"] = "model_error" not in seen and not any(
        params_moved(restored_params, [p.detach() for p in params]))
    x, y = batches[2]
    _train_step(case, model, optimizer, x, y)
    _train_step(case, restored, restored_opt, x, y)
    seen["resumes"] = not any(params_moved(restored_params, [p.detach() for p in params]))
    return seen


def checkpoint_facts(case: dict[str, Any], reference: dict[str, Any],
                     observed: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any]:
    keys: list[str] = observed.get("keys") or []
    names = set(observed["names"])
    found: dict[str, Any] = {
        "wrote-nothing": observed["bytes"] == 0, "load-error": observed["load_error"],
        "weights-moved": observed["weights_moved"],
        "returned-kind": kind_of(observed["returned"]),
    }
    if observed["bytes"] == 0 or observed["load_error"] is not None:
        return found
    found.update({
        "saved-type": observed["saved_type"],
        "saved-keys": ", ".join(repr(k) for k in keys) if keys else msg("none"),
        "has-model": "model" in keys,
        "has-optimizer": "optimizer" in keys,
        "model-only": bool(keys) and set(keys) <= names and len(keys) == len(names),
        "model-error": observed.get("model_error"),
        "optimizer-error": observed.get("optimizer_error"),
        "model-restored": bool(observed.get("model_restored")),
        "resumes": bool(observed.get("resumes")),
    })
    return found


CHECKPOINT_NAMES = frozenset({
    "wrote-nothing", "load-error", "weights-moved", "returned-kind", "saved-type",
    "saved-keys", "has-model", "has-optimizer", "model-only", "model-error",
    "optimizer-error", "model-restored", "resumes"})


def checkpoint_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (("optimizer",),
            ("Adam" if case["optimizer"] == "adam" else "SGD(momentum=0.9)",))


FAMILY = Family(arity=3, names=lambda parts: CHECKPOINT_NAMES, cases=checkpoint_cases,
                reference=checkpoint_reference, observe=observe_checkpoint,
                facts=checkpoint_facts, columns=checkpoint_columns)
