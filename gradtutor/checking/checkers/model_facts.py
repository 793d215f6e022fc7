"""The small seeded `nn.Sequential` that four input families (`families.py`) hand the learner,
its shared helpers, and the first of those families, this module's `FAMILY` (the others, each
the `FAMILY` of its own module: clip_facts.py, eval_facts.py, checkpoint_facts.py):

- `model-setup`, `fn(model)`: what the function set up on the model (which parameters still
  require grad, which modules are in eval mode), then two SGD steps of the family's own: which
  `.grad` stayed None and which weights moved.

In this module and the other three, the worker side (`*_cases`, `*_reference`, `observe_*`)
imports torch inside its functions and hands back plain data; the tutor side (`*_facts`, the
tables) is pure.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.family import Family
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


def both_losses(rng: Any, count: int) -> list[bool]:
    """Which of `count` cases classify (cross-entropy) rather than regress (MSE): at least one
    of each, in any order. Cross-entropy is the loss whose arguments cannot be swapped, MSE the
    one whose targets are floats: a mistake either of them reveals is then caught on every
    seed, not only on those that happen to draw it."""
    kinds = [True, False, *(rng.random() < 0.5 for _ in range(count - 2))]
    rng.shuffle(kinds)
    return kinds


# The cases `both_losses` makes every seed hold (`Family.fixed`).
BOTH_LOSSES = {
    "classifier": lambda drawn: any(case["loss"] == "cross-entropy" for case in drawn),
    "regressor": lambda drawn: any(case["loss"] == "mse" for case in drawn),
}


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


def c_attribute(name: str) -> Any:
    """A tensor attribute as PyTorch's C type defines it (`grad`, `requires_grad`): learner
    code can add a property to torch.nn.Parameter, but not change this type."""
    import torch

    return vars(torch._C.TensorBase)[name].__get__


def param_snapshot(params: list[Any]) -> list[Any]:
    return [p.detach().clone() for p in params]


def params_moved(params: list[Any], before: list[Any]) -> list[bool]:
    import torch

    return [not torch.equal(p.detach(), b) for p, b in zip(params, before, strict=True)]


def returned_fact(trace: Any, value: Any) -> Any:
    """What the function returned as plain data: a number for a Python number or a one-number
    tensor, else `trace.values` (None, nested lists, or a description)."""
    if type(value) in (int, float):
        return float(value)
    seen = trace.values(value)
    return float(seen) if isinstance(seen, float) else seen


def as_number(value: Any) -> float | None:
    return value if isinstance(value, float) else None


def kind_of(value: Any) -> str | None:
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
    before = param_snapshot(params)
    returned = fn(model)
    requires = c_attribute("requires_grad")
    grad = c_attribute("grad")
    seen: dict[str, Any] = {
        "names": [name for name, _ in named],
        "requires_grad": [bool(requires(p)) for p in params],
        "module_flags": [module_words(name) for name, m in modules
                         if "requires_grad" in vars(m)],
        "eval_modules": [module_words(name) for name, m in modules
                         if vars(m).get("training") is False],
        "returned": returned_fact(trace, returned),
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
                moved=params_moved(params, before))
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
        "returned": returned, "returned-kind": kind_of(returned),
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


FAMILY = Family(arity=1, names=lambda parts: SETUP_NAMES, cases=setup_cases,
                reference=setup_reference, observe=observe_setup, facts=setup_facts,
                tables={"parameters": parameters_table})
