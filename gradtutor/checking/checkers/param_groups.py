"""The `param-groups` input family (`FAMILY`, registered in `families.py`): an optimizer
whose parameters, in one to three param groups, all hold a gradient; the function is called
with the optimizer, and what became of every parameter's .grad and weight is observed.
clear-grads is declared on it.

Worker side (`cases`, `reference`, `observe`) builds the optimizers; the tutor side (`facts`,
the tables) is pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random

from gradtutor.checking.checkers.common import close, flat, fmt, seeded_values, shape
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

OPTIMIZERS = ("SGD", "Adam")
SHAPES: tuple[tuple[int, ...], ...] = ((1,), (2,), (3,), (2, 2), (2, 3), (3, 2))
ORDINALS = (msg("first"), msg("second"), msg("third"))


def cases(seed: int) -> list[dict[str, Any]]:
    """Four optimizers; between them 1, 2 and 3 param groups, so a learner who clears only
    some groups is caught on every seed. Each first group has at least two parameters."""
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)
    group_counts = [1, 2, 3, rng.randint(1, 3)]
    rng.shuffle(group_counts)
    return [optimizer_case(rng, n) for n in group_counts]


def optimizer_case(rng: random.Random, groups: int) -> dict[str, Any]:
    name = rng.choice(OPTIMIZERS)
    lr = rng.choice((0.1, 0.05, 0.01))
    options: dict[str, Any] = {"lr": lr}
    if name == "SGD":
        options["momentum"] = rng.choice((0.0, 0.9))
    out = []
    for g in range(groups):
        count = rng.randint(2, 3) if g == 0 else rng.randint(1, 3)
        params = []
        for _ in range(count):
            dims = rng.choice(SHAPES)
            params.append({"w": numbers(rng, dims), "grad": numbers(rng, dims)})
        group: dict[str, Any] = {"params": params}
        if g > 0 and rng.random() < 0.5:
            group["lr"] = lr / 10  # param groups usually differ in their options
        out.append(group)
    return {"optimizer": name, "options": options, "groups": out}


def numbers(rng: random.Random, dims: tuple[int, ...]) -> Any:
    return seeded_values(rng, dims, 0.1, 2.0, 3)


def grad_slot() -> Any:
    """The `.grad` attribute as PyTorch's C type defines it. Learner code can put a `grad`
    property on torch.nn.Parameter or torch.Tensor, but cannot change this C type, so reads
    and writes through it see the real gradient."""
    import torch

    return vars(torch._C.TensorBase)["grad"]


def build(case: dict[str, Any]) -> tuple[list[list[Any]], Any]:
    """The case's parameters (by group), each with a gradient, and its optimizer (worker)."""
    import torch

    params = [[torch.nn.Parameter(torch.tensor(p["w"])) for p in group["params"]]
              for group in case["groups"]]
    slot = grad_slot()
    for group, spec in zip(params, case["groups"], strict=True):
        for p, p_spec in zip(group, spec["params"], strict=True):
            slot.__set__(p, torch.tensor(p_spec["grad"]))
    groups = [{"params": group, **{k: v for k, v in spec.items() if k != "params"}}
              for group, spec in zip(params, case["groups"], strict=True)]
    optimizer = getattr(torch.optim, case["optimizer"])(groups, **case["options"])
    return params, optimizer


def reference(case: dict[str, Any]) -> dict[str, Any]:
    params, _ = build(case)
    return {"weights": [[p.detach().tolist() for p in group] for group in params],
            "grads": [[p.grad.tolist() for p in group] for group in params]}


def observe(case: dict[str, Any], fn: Any, trace: Any,
            catches: tuple[str, ...] = ()) -> dict[str, Any]:
    params, optimizer = build(case)
    start = len(trace.events)
    fn(optimizer)
    # read through our own references: whatever the learner did to optimizer.param_groups
    slot = grad_slot()
    return {"grads": [[trace.values(slot.__get__(p)) for p in group] for group in params],
            "weights": [[trace.values(p) for p in group] for group in params],
            "events": trace.events[start:]}


def group_states(reference: dict[str, Any], observed: dict[str, Any]) -> list[list[str]]:
    """What became of each parameter's .grad, group by group (`state`)."""
    return [[state(after, before) for after, before in zip(got, want, strict=True)]
            for got, want in zip(observed["grads"], reference["grads"], strict=True)]


def state(after: Any, before: Any) -> str:
    """What became of one parameter's .grad: "none", "zeros", "kept" or "changed"."""
    if after is None:
        return "none"
    numbers = flat(after)
    if numbers is not None and shape(after) == shape(before) and all(x == 0 for x in numbers):
        return "zeros"
    return "kept" if close(after, before) else "changed"


def facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
          parts: tuple[str, ...]) -> dict[str, Any]:
    """What a check may name of one case: how each parameter's .grad ended, group by group,
    in the shapes mistakes take; what the function called; whether any weight moved."""
    states = group_states(reference, observed)
    every = {s for group in states for s in group}
    events = observed["events"]
    uniform = [set(group) for group in states]
    left = [i for i, g in enumerate(uniform) if g != {"none"}]
    cleared = [i for i, g in enumerate(uniform) if g == {"none"}]
    whole_groups = (len(states) > 1 and all(len(g) == 1 for g in uniform) and bool(cleared)
                    and bool(left))
    left_states = frozenset(s for i in left for s in uniform[i])
    kept = {frozenset({"kept"}): msg("kept their gradients"),
            frozenset({"zeros"}): msg("held zeros, not None")}.get(
                left_states, msg("still had a .grad tensor"))
    found: dict[str, Any] = {
        "cleared": every == {"none"},
        "all-zeros": every == {"zeros"}, "any-zeros": "zeros" in every,
        "all-kept": every == {"kept"},
        "whole-groups-cleared": whole_groups,
        "first-of-each-group-only": (every != {"none"}
                                     and all(group[0] == "none" for group in states)),
        "zero-grad-keeps-tensors": any(e.get("event") == "zero_grad" and not e["set_to_none"]
                                       for e in events),
        "step-called": any(e.get("event") == "step" for e in events),
        "remaining": sum(s != "none" for group in states for s in group),
        "total": sum(len(group) for group in states),
        "weights-moved": bool(_moved(reference, observed)),
    }
    if whole_groups:
        names = [ORDINALS[i] for i in left]
        done = [ORDINALS[i] for i in cleared]
        # three groups at most, so one or two groups on either side
        found["groups-left-words"] = (
            msg("Parameters in the {a} and {b} param groups {kept}", a=names[0], b=names[-1],
                kept=kept) if len(names) > 1 else
            msg("Parameters in the {group} param group {kept}", group=names[0], kept=kept))
        found["groups-cleared-words"] = (
            msg("your function cleared only the {a} and {b} groups", a=done[0], b=done[-1])
            if len(done) > 1 else
            msg("your function cleared only the {group} group", group=done[0]))
    return found


NAMES = frozenset({"cleared", "all-zeros", "any-zeros", "all-kept", "whole-groups-cleared",
                   "first-of-each-group-only", "zero-grad-keeps-tensors", "step-called",
                   "remaining", "total", "weights-moved", "groups-left-words",
                   "groups-cleared-words"})


def _moved(reference: dict[str, Any], observed: dict[str, Any]) -> list[tuple[int, int]]:
    """(group, parameter) of each weight the function changed."""
    return [(g, p) for g, (got, want) in enumerate(zip(observed["weights"],
                                                       reference["weights"], strict=True))
            for p, (after, before) in enumerate(zip(got, want, strict=True))
            if not close(after, before)]


def grads_table(reference: dict[str, Any], observed: dict[str, Any]) -> Table:
    """Every parameter's .grad before and after the function, group by group."""
    rows: list[tuple[str, ...]] = []
    failing: set[int] = set()
    for g, (got, want) in enumerate(zip(observed["grads"], reference["grads"], strict=True)):
        for p, (after, before) in enumerate(zip(got, want, strict=True)):
            if after is not None:  # a .grad the function left: the mistake
                failing.add(len(rows))
            rows.append((msg("group {group}", group=g + 1),
                         msg("{parameter}: shape {shape}", parameter=p + 1,
                             shape=str(list(shape(before)))),
                         fmt(before), fmt(after)))
    return Table((msg("param group"), msg("parameter"), msg(".grad before"),
                  msg(".grad after your function")), tuple(rows), frozenset(failing))


def weights_table(reference: dict[str, Any], observed: dict[str, Any]) -> Table:
    """Each weight the function changed, before and after."""
    rows = tuple((msg("group {group}", group=g + 1), f"{p + 1}",
                  fmt(reference["weights"][g][p]), fmt(observed["weights"][g][p]))
                 for g, p in _moved(reference, observed))
    return Table((msg("param group"), msg("parameter"), msg("weight before"), msg("after")),
                 rows, frozenset(range(len(rows))))  # every weight here moved: each is wrong


FAMILY = Family(
    arity=1, names=lambda parts: NAMES, cases=cases, reference=reference, observe=observe,
    facts=facts,
    tables={"grads": lambda case, reference, observed: grads_table(reference, observed),
            "weights": lambda case, reference, observed: weights_table(reference, observed)})
