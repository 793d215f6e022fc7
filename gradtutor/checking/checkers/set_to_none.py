"""`set-to-none`: clear_grads(optimizer) leaves every parameter's .grad None, in every param
group, and leaves the weights alone.

Worker side (`cases`, `expected`, `observe`) builds the optimizers; tutor side (`judge`)
decides.
"""

from __future__ import annotations

import random
from typing import Any

from gradtutor.checking.checkers.common import close, flat, fmt, shape
from gradtutor.checking.checkers.grad_reading import nest
from gradtutor.checking.verdict import Check, Table
from gradtutor.i18n import msg

FUNCTION = "clear_grads"
ARITY = 1

OPTIMIZERS = ("SGD", "Adam")
SHAPES: tuple[tuple[int, ...], ...] = ((1,), (2,), (3,), (2, 2), (2, 3), (3, 2))
ORDINALS = (msg("first"), msg("second"), msg("third"))


def cases(seed: int) -> list[dict[str, Any]]:
    """Four optimizers; between them 1, 2 and 3 param groups, so a learner who clears only
    some groups is caught on every seed. Each first group has at least two parameters."""
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
    size = 1
    for d in dims:
        size *= d
    return nest([round(rng.choice((-1, 1)) * rng.uniform(0.1, 2.0), 3) for _ in range(size)],
                dims)


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


def expected(case: dict[str, Any]) -> dict[str, Any]:
    params, _ = build(case)
    return {"weights": [[p.detach().tolist() for p in group] for group in params],
            "grads": [[p.grad.tolist() for p in group] for group in params]}


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    params, optimizer = build(case)
    start = len(trace.events)
    fn(optimizer)
    # read through our own references: whatever the learner did to optimizer.param_groups
    slot = grad_slot()
    return {"grads": [[trace.values(slot.__get__(p)) for p in group] for group in params],
            "weights": [[trace.values(p) for p in group] for group in params],
            "events": trace.events[start:]}


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    return [all_none(cases, expected, observed), weights_unchanged(cases, expected, observed)]


def state(after: Any, before: Any) -> str:
    """What became of one parameter's .grad: "none", "zeros", "kept" or "changed"."""
    if after is None:
        return "none"
    numbers = flat(after)
    if numbers is not None and shape(after) == shape(before) and all(x == 0 for x in numbers):
        return "zeros"
    return "kept" if close(after, before) else "changed"


def all_none(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
             observed: list[dict[str, Any]]) -> Check:
    """Every parameter's .grad is None afterwards, in every group."""
    for exp, obs in zip(expected, observed, strict=True):
        states = [[state(after, before) for after, before in zip(got, want, strict=True)]
                  for got, want in zip(obs["grads"], exp["grads"], strict=True)]
        if all(s == "none" for group in states for s in group):
            continue
        return Check("all-none", "fail", why_not_none(states, obs["events"]),
                     msg("every parameter, in every param group, must end with .grad set to "
                         "None: the table shows which did not"),
                     grads_table(exp, obs))
    return Check("all-none", "pass", msg("every parameter's .grad was None afterwards"))


def why_not_none(states: list[list[str]], events: list[dict[str, Any]]) -> str:
    """The learner's mistake, from what happened to each parameter's .grad, group by group."""
    every = {s for group in states for s in group}
    zero_grads = [e for e in events if e.get("event") == "zero_grad"]
    if every == {"zeros"}:
        if any(not e["set_to_none"] for e in zero_grads):
            return msg("After your function, .grad was a tensor of zeros, not None: "
                       "zero_grad(set_to_none=False) keeps the tensors and fills them with "
                       "zeros.")
        return msg("After your function, every .grad was a tensor of zeros, not None: "
                   "filling them with zeros (p.grad.zero_() or torch.zeros_like) keeps a "
                   "tensor there. Set p.grad = None instead.")
    if every == {"kept"}:
        if any(e.get("event") == "step" for e in events):
            return msg("Every parameter kept its gradient: optimizer.step() updates the "
                       "weights from .grad, but it does not clear .grad.")
        return msg("Every parameter kept its gradient: nothing cleared them. (Writing "
                   "`optimizer.zero_grad` without `()` does not call it, and `g = p.grad; "
                   "g = None` only changes the name g, not p.grad.)")
    group_states = [set(group) for group in states]
    if len(states) > 1 and all(len(g) == 1 for g in group_states) and {"none"} in group_states:
        left = [ORDINALS[i] for i, g in enumerate(group_states) if g != {"none"}]
        cleared = [ORDINALS[i] for i, g in enumerate(group_states) if g == {"none"}]
        left_states = {s for g in group_states if g != {"none"} for s in g}
        kept = {frozenset({"kept"}): msg("kept their gradients"),
                frozenset({"zeros"}): msg("held zeros, not None")}.get(
                    frozenset(left_states), msg("still had a .grad tensor"))
        # three groups at most, so one or two groups on either side
        groups = (msg("Parameters in the {a} and {b} param groups {kept}", a=left[0],
                      b=left[-1], kept=kept) if len(left) > 1 else
                  msg("Parameters in the {group} param group {kept}", group=left[0], kept=kept))
        only = (msg("your function cleared only the {a} and {b} groups", a=cleared[0],
                    b=cleared[-1]) if len(cleared) > 1 else
                msg("your function cleared only the {group} group", group=cleared[0]))
        return msg("{groups}: {only}. An optimizer can hold several param groups; clear the "
                   "parameters of every group in optimizer.param_groups.",
                   groups=groups, only=only)
    if all(group[0] == "none" for group in states):
        return msg("Only the first parameter of each param group was cleared: the others kept "
                   "their .grad. Clear every parameter in group['params'], not just "
                   "group['params'][0].")
    if "zeros" in every:
        return msg("Some .grad were tensors of zeros, not None: zeroing keeps a tensor there. "
                   "Set p.grad = None instead.")
    remaining = sum(s != "none" for group in states for s in group)
    total = sum(len(group) for group in states)
    return msg("{remaining} of {total} parameters still had a .grad tensor afterwards (see "
               "the table): clear every parameter of every param group.",
               remaining=remaining, total=total)


def grads_table(expected: dict[str, Any], observed: dict[str, Any]) -> Table:
    rows = []
    for g, (got, want) in enumerate(zip(observed["grads"], expected["grads"], strict=True)):
        for p, (after, before) in enumerate(zip(got, want, strict=True)):
            rows.append((msg("group {group}", group=g + 1),
                         msg("{parameter}: shape {shape}", parameter=p + 1,
                             shape=str(list(shape(before)))),
                         fmt(before), fmt(after)))
    return Table((msg("param group"), msg("parameter"), msg(".grad before"),
                  msg(".grad after your function")), tuple(rows))


def weights_unchanged(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
                      observed: list[dict[str, Any]]) -> Check:
    """Clearing gradients leaves the weights as they were."""
    for exp, obs in zip(expected, observed, strict=True):
        moved = [(g, p) for g, (got, want) in enumerate(zip(obs["weights"], exp["weights"],
                                                            strict=True))
                 for p, (after, before) in enumerate(zip(got, want, strict=True))
                 if not close(after, before)]
        if not moved:
            continue
        if any(e.get("event") == "step" for e in obs["events"]):
            message = msg("Your function changed the weights: it called optimizer.step(), "
                          "which updates them from .grad. clear_grads should only clear the "
                          "gradients.")
        else:
            message = msg("Your function changed the weights; clearing the gradients must "
                          "leave them as they were.")
        rows = tuple((msg("group {group}", group=g + 1), f"{p + 1}", fmt(exp["weights"][g][p]),
                      fmt(obs["weights"][g][p])) for g, p in moved)
        return Check("weights-unchanged", "fail", message,
                     msg("only set .grad; do not call optimizer.step() or change the weights"),
                     Table((msg("param group"), msg("parameter"), msg("weight before"),
                            msg("after")), rows))
    return Check("weights-unchanged", "pass", msg("the weights were left as they were"))
