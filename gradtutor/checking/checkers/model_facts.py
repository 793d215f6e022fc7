"""Input families on a small `nn.Sequential` (`families.py`), for the training lesson and any
exercise that hands the learner a model:

- `model-setup`, `fn(model)`: what the function set up on the model (which parameters still
  require grad, which modules are in eval mode), then two SGD steps of the family's own: which
  `.grad` stayed None and which weights moved;
- `clip-step`, `fn(model, optimizer, loss_fn, x, y, max_norm)`: one training step with
  gradient clipping; the gradient the optimizer's step used and what the function returned;
- `evaluation`, `fn(model, loss_fn, batches)`: how each forward pass ran (train or eval mode,
  recording a graph or not), the mode left behind, the batch-norm statistics, the number
  returned;
- `checkpoint`, `fn(model, optimizer, f)`: what was written to the file object `f`, whether
  `torch.load(..., weights_only=True)` reads it, and whether a fresh model and optimizer
  loaded from it go on training exactly as the originals do.

Worker side (`*_cases`, `*_reference`, `observe_*`) imports torch inside its functions and
hands back plain data; the tutor side (`*_facts`, the tables) is pure.
"""

from __future__ import annotations

import math
from typing import Any

from gradtutor.checking.checkers.common import close, flat
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

# ---- shared: a small seeded model (worker side) ---------------------------------------------


def model_spec(rng: Any, layers: int | None = None, classes: bool = False) -> dict[str, Any]:
    """A plain description of an `nn.Sequential` of Linear layers with ReLU between them."""
    count = layers if layers is not None else rng.randint(2, 3)
    sizes = [rng.randint(2, 4) for _ in range(count)]
    out = rng.randint(2, 3) if classes else rng.randint(1, 2)
    return {"seed": rng.randrange(2**31), "sizes": [*sizes, out], "rows": rng.randint(3, 5),
            "loss": "cross-entropy" if classes else "mse"}


def build_model(spec: dict[str, Any], seed: int | None = None) -> Any:
    """The model a spec describes, its weights drawn from the spec's seed (or `seed`), and a
    generator for the data that follows."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(spec["seed"] if seed is None else seed)
    sizes = spec["sizes"]
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(n_in, n_out))
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.8)
    return model, gen


def batch(spec: dict[str, Any], gen: Any, rows: int | None = None) -> tuple[Any, Any]:
    """One batch `(x, y)` for the spec's loss: targets are class indices for cross-entropy."""
    import torch

    n = rows or spec["rows"]
    x = torch.randn(n, spec["sizes"][0], generator=gen)
    out = spec["sizes"][-1]
    y = (torch.randint(0, out, (n,), generator=gen) if spec["loss"] == "cross-entropy"
         else torch.randn(n, out, generator=gen))
    return x, y


def loss_of(spec: dict[str, Any]) -> Any:
    from torch import nn

    return nn.CrossEntropyLoss() if spec["loss"] == "cross-entropy" else nn.MSELoss()


def _c_attribute(name: str) -> Any:
    """A tensor attribute as PyTorch's C type defines it (`grad`, `requires_grad`): learner
    code can add a property to torch.nn.Parameter, but not change this type."""
    import torch

    return vars(torch._C.TensorBase)[name].__get__


def _snapshot(params: list[Any]) -> list[Any]:
    return [p.detach().clone() for p in params]


def _moved(params: list[Any], before: list[Any]) -> list[bool]:
    import torch

    return [not torch.equal(p.detach(), b) for p, b in zip(params, before, strict=True)]


def _returned(trace: Any, value: Any) -> Any:
    """What the function returned as plain data: a number for a Python number or a one-number
    tensor, else `trace.values` (None, nested lists, or a description)."""
    if type(value) in (int, float):
        return float(value)
    seen = trace.values(value)
    return float(seen) if isinstance(seen, float) else seen


def _number(value: Any) -> float | None:
    return value if isinstance(value, float) else None


def _kind(value: Any) -> str | None:
    """What a returned value is, when it is not a number: 'none', 'tensor', or its type."""
    if value is None:
        return "none"
    if isinstance(value, dict):
        return str(value.get("not_a_tensor", "object"))
    return None if isinstance(value, float) else "tensor"


def module_words(name: str) -> str:
    """A module's name from named_modules() as code that reaches it: '0' -> 'model[0]'."""
    parts = name.split(".") if name else []
    return "model" + "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts)


def names_words(names: list[str]) -> str:
    """Parameter names as a learner reads them: `'0.weight', '0.bias'`."""
    return ", ".join(repr(name) for name in names) if names else msg("none")


# ---- model-setup: fn(model), then two SGD steps of the family's own -------------------------

SETUP_STEPS = 2


def setup_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    return [{**model_spec(rng, layers=layers), "lr": round(rng.uniform(0.05, 0.2), 3)}
            for layers in (2, 3, rng.randint(2, 3))]


def setup_reference(case: dict[str, Any]) -> dict[str, Any]:
    model, _ = build_model(case)
    return {"names": [name for name, _ in model.named_parameters()]}


def observe_setup(case: dict[str, Any], fn: Any, trace: Any,
                  catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """Call fn(model); read each parameter's requires_grad and each module's mode; then train
    two steps with an SGD optimizer (momentum, weight decay) made before the call, over every
    parameter, as a training script would, and read which .grad stayed None and which
    weights moved."""
    import torch

    model, gen = build_model(case)
    named = list(model.named_parameters())
    params = [p for _, p in named]
    modules = list(model.named_modules())
    optimizer = torch.optim.SGD(params, lr=case["lr"], momentum=0.9, weight_decay=0.01)
    x, y = batch(case, gen)
    before = _snapshot(params)
    returned = fn(model)
    requires = _c_attribute("requires_grad")
    grad = _c_attribute("grad")
    seen: dict[str, Any] = {
        "names": [name for name, _ in named],
        "requires_grad": [bool(requires(p)) for p in params],
        "module_flags": [module_words(name) for name, m in modules
                         if "requires_grad" in vars(m)],
        "eval_modules": [module_words(name) for name, m in modules
                         if vars(m).get("training") is False],
        "returned": _returned(trace, returned),
    }
    trained = 0
    for _ in range(SETUP_STEPS):
        optimizer.zero_grad()
        loss = loss_of(case)(model(x), y)
        if not loss.requires_grad:  # nothing left to train: backward would raise
            break
        loss.backward()
        optimizer.step()
        trained += 1
    seen.update(trained=trained, grad_none=[grad(p) is None for p in params],
                moved=_moved(params, before))
    return seen


def _split(names: list[str], flags: list[bool]) -> list[str]:
    return [name for name, flag in zip(names, flags, strict=True) if flag]


def setup_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
                parts: tuple[str, ...]) -> dict[str, Any]:
    """Which parameters the function froze, against the solution's; what a training step then
    did to them."""
    names = observed["names"]
    frozen = _split(names, [not r for r in observed["requires_grad"]])
    solution = reference.get("solution", observed)
    meant = _split(names, [not r for r in solution["requires_grad"]])
    missed = [n for n in meant if n not in frozen]
    extra = [n for n in frozen if n not in meant]
    trainable = [n for n in names if n not in frozen]
    grad_none = _split(names, observed["grad_none"])
    moved = _split(names, observed["moved"])
    returned = observed["returned"]
    return {
        "frozen": names_words(frozen), "frozen-count": len(frozen),
        "trainable-count": len(trainable), "total": len(names),
        "not-frozen": names_words(missed), "not-frozen-count": len(missed),
        "wrongly-frozen": names_words(extra), "wrongly-frozen-count": len(extra),
        "module-flag-set": bool(observed["module_flags"]),
        "module-flags": ", ".join(observed["module_flags"]),
        "in-eval": bool(observed["eval_modules"]),
        "eval-modules": ", ".join(observed["eval_modules"]),
        "trained": observed["trained"] > 0,
        "frozen-grads-none": all(n in grad_none for n in frozen),
        "frozen-moved": any(n in moved for n in frozen),
        "trainable-moved": observed["trained"] > 0 and all(n in moved for n in trainable),
        "returned": returned, "returned-kind": _kind(returned),
    }


SETUP_NAMES = frozenset({
    "frozen", "frozen-count", "trainable-count", "total", "not-frozen", "not-frozen-count",
    "wrongly-frozen", "wrongly-frozen-count", "module-flag-set", "module-flags", "in-eval",
    "eval-modules", "trained", "frozen-grads-none", "frozen-moved", "trainable-moved",
    "returned", "returned-kind"})


def _yes(flag: bool) -> str:
    return msg("yes") if flag else msg("no")


def parameters_table(case: dict[str, Any], reference: dict[str, Any],
                     observed: dict[str, Any]) -> Table:
    """Each parameter: whether it still requires grad, whether it should, and what a training
    step then did (its .grad, whether it moved)."""
    solution = reference.get("solution", observed)
    failing = frozenset(i for i, (mine, meant) in enumerate(zip(
        observed["requires_grad"], solution["requires_grad"], strict=True)) if mine != meant)
    rows = tuple(
        (name, str(mine), str(meant), "None" if none else msg("a tensor"), _yes(moved))
        for name, mine, meant, none, moved in zip(
            observed["names"], observed["requires_grad"], solution["requires_grad"],
            observed["grad_none"], observed["moved"], strict=True))
    return Table((msg("parameter"), msg("requires_grad (yours)"), msg("should be"),
                  msg(".grad after a step"), msg("moved")), rows, failing)


# ---- clip-step: fn(model, optimizer, loss_fn, x, y, max_norm) --------------------------------

# Each case scales max_norm from the gradient's own total norm: most clip, one does not.
CLIP_FACTORS = ((0.2, 0.6), (0.2, 0.6), (1.5, 3.0))


def clip_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    out = []
    for low, high in CLIP_FACTORS:
        spec = model_spec(rng, classes=rng.random() < 0.5)
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
    return {"returned": _returned(trace, returned), "step_grads": step_grads,
            "backward": sum(e.get("event") == "backward" for e in events),
            "zero_grad": sum(e.get("event") == "zero_grad" for e in events),
            "steps": sum(e.get("event") == "step" for e in events)}


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
        "returned": _number(returned) if _number(returned) is not None else returned,
        "returned-kind": _kind(returned),
    }


CLIP_NAMES = frozenset({
    "backward-count", "zero-grad-count", "step-count", "step-grads", "step-grads-norm",
    "clipped-grads", "raw-grads", "kept-leftovers", "clipped-each", "unclipped",
    "clipping-needed", "norm-before", "norm-after", "max-norm", "loss", "returned",
    "returned-kind"})


def _short(value: float | None) -> str:
    return "None" if value is None else f"{value:.4g}"


def clip_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (("loss_fn", "optimizer"),
            ("CrossEntropyLoss" if case["loss"] == "cross-entropy" else "MSELoss",
             {"sgd": "SGD", "momentum": "SGD(momentum=0.9)", "adam": "Adam"}[case["optimizer"]]))


def norms_table(case: dict[str, Any], reference: dict[str, Any],
                observed: dict[str, Any]) -> Table:
    """The norms a clipping step is about: before, max_norm, what the step used, returned."""
    returned = _number(observed["returned"])
    return Table((msg("total norm before clipping"), "max_norm", msg("norm the step used"),
                  msg("after clipping, it should be"), msg("you returned")),
                 ((_short(reference["norm"]), _short(reference["max_norm"]),
                   _short(_norm(observed["step_grads"])),
                   _short(min(reference["norm"], reference["max_norm"])),
                   _short(returned) if returned is not None else
                   str(_kind(observed["returned"]))),), frozenset({0}))


# ---- evaluation: fn(model, loss_fn, batches) on a model with batch norm and dropout -----------

def eval_cases(seed: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(3):
        spec = model_spec(rng, layers=2, classes=rng.random() < 0.5)
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
    before = _snapshot(params)
    forwards: list[dict[str, bool]] = []
    is_tensor = trace.is_tensor
    requires = _c_attribute("requires_grad")

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
    return {"returned": _returned(trace, returned), "returned_tensor": trace.is_tensor(returned),
            "forwards": forwards,
            "mode_after": "train" if modes == {True} else "eval" if modes == {False}
            else "mixed",
            "stats_changed": not (torch.equal(norm.running_mean, stats[0])
                                  and torch.equal(norm.running_var, stats[1])),
            "weights_moved": any(_moved(params, before)),
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
        "returned": _number(returned) if _number(returned) is not None else returned,
        # a one-number tensor reads as its number; the prompt asks for a Python float
        "returned-kind": "tensor" if observed.get("returned_tensor") else _kind(returned),
    }


EVAL_NAMES = frozenset({
    "forward-count", "batch-count", "forward-in-train-mode", "graph-built", "mode-after",
    "stats-changed", "weights-moved", "backward-count", "mean-loss", "loss-sum",
    "last-batch-loss", "returned", "returned-kind"})


def eval_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (("batches", "loss_fn"),
            (str(case["batches"]),
             "CrossEntropyLoss" if case["loss"] == "cross-entropy" else "MSELoss"))


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
    before = _snapshot(params)
    f = io.BytesIO()
    returned = fn(model, optimizer, f)
    seen: dict[str, Any] = {"returned": _returned(trace, returned),
                            "weights_moved": any(_moved(params, before)),
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
        _moved(restored_params, [p.detach() for p in params]))
    x, y = batches[2]
    _train_step(case, model, optimizer, x, y)
    _train_step(case, restored, restored_opt, x, y)
    seen["resumes"] = not any(_moved(restored_params, [p.detach() for p in params]))
    return seen


def checkpoint_facts(case: dict[str, Any], reference: dict[str, Any],
                     observed: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any]:
    keys: list[str] = observed.get("keys") or []
    names = set(observed["names"])
    found: dict[str, Any] = {
        "wrote-nothing": observed["bytes"] == 0, "load-error": observed["load_error"],
        "weights-moved": observed["weights_moved"],
        "returned-kind": _kind(observed["returned"]),
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
