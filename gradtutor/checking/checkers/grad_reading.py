"""The `fresh-leaf` input family (`FAMILY`, registered in `families.py`), on which the
exercises that read `w.grad` are declared (read-grad, none-before-backward, two-backwards):
their inputs (a fresh leaf `w` and a named loss), the reference gradient, how the function is
called and observed, the facts a check may name, and the words for a value that should have
been the gradient but is not. `plain`, `backward_runs` and `ran` serve other families too.

`leaf_cases`, `reference`, `fresh_leaf` and the observing (`_observe_leaf`) run in the worker;
the rest is pure and runs in the tutor's process.
"""

from __future__ import annotations

import types
from typing import Any

from gradtutor.checking.checkers.common import (
    LOSSES,
    build_loss,
    close,
    count,
    flat,
    fmt,
    nest,
    seeded_values,
    shape,
    uncalled,
    uncalled_words,
)
from gradtutor.checking.checkers.family import CATCHABLE, Data, Facts, Family
from gradtutor.i18n import msg

# Vectors and small matrices, as weights come in both.
SHAPES: tuple[tuple[int, ...], ...] = ((2,), (3,), (4,), (5,), (2, 2), (2, 3), (3, 2))
MULTIPLES = range(6)
# How many gradients' worth a wrong value might hold: 0 (zeros) .. 5


def leaf_cases(seed: int, how_many: int = 4) -> list[dict[str, Any]]:
    """`how_many` inputs, each a different loss, shape and values (never near zero, so that
    zeros, one gradient and two gradients always look different)."""
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)
    losses = rng.sample(sorted(LOSSES), k=min(how_many, len(LOSSES)))
    out = []
    for i in range(how_many):
        dims = rng.choice(SHAPES)
        out.append({"w": seeded_values(rng, dims, 0.1, 2.0, 3),
                    "loss": losses[i % len(losses)]})
    return out


def fresh_leaf(case: dict[str, Any]) -> Any:
    """The case's `w` as a new leaf tensor that requires grad (worker side)."""
    import torch

    return torch.tensor(case["w"], dtype=torch.float64, requires_grad=True)


def reference(case: dict[str, Any]) -> dict[str, Any]:
    """The true gradient of the case's loss at w, and the loss itself (real torch)."""
    import torch

    w = fresh_leaf(case)
    loss = build_loss(case["loss"])(w)
    (grad,) = torch.autograd.grad(loss, w)
    return {"grad": grad.tolist(), "loss": loss.item()}


def returns_backward(fn: Any) -> bool:
    """Whether `fn` ends in `return <...>.backward(...)`: a return that hands back what a
    backward call gave, which is always None. Read from the bytecode: the call just before a
    return is a call of a method or attribute named `backward`."""
    from gradtutor.checking.bytecode import instructions

    code = getattr(fn, "__code__", None)
    if type(code) is not types.CodeType:
        return False
    try:
        ops = instructions(code)
    except Exception:  # noqa: BLE001 - odd code objects are simply not recognised
        return False
    for at, op in enumerate(ops):
        if op.opname != "RETURN_VALUE" or at == 0 or not ops[at - 1].opname.startswith("CALL"):
            continue
        names = [o.argval for o in ops[:at] if o.opname in ("LOAD_METHOD", "LOAD_ATTR")]
        if names and names[-1] == "backward":
            return True
    return False


def plain(trace: Any, value: Any) -> Any:
    """`trace.values(value)`, and for a plain Python number also the number itself."""
    described = trace.values(value)
    if type(value) in (int, float):
        return {**described, "number": float(value)}
    return described


def accumulations(observed: dict[str, Any]) -> list[Any]:
    """The value of w.grad after each real accumulation into it, in order."""
    return [e["grad"] for e in observed["events"] if e.get("event") == "accumulate"]


def backward_runs(observed: dict[str, Any]) -> int:
    """How many backward passes reached w: accumulate events come from a hook on w itself, so
    they count real backward passes, whatever the learner did to `Tensor.backward`."""
    return count(observed["events"], "accumulate")


def scaled(values: Any, k: float) -> Any:
    if isinstance(values, list):
        return [scaled(v, k) for v in values]
    return values * k


def multiple_of(values: Any, grad: Any) -> int | None:
    """k when `values` is k times the gradient (k = 0 is zeros of its shape), else None."""
    if flat(values) is None:
        return None
    return next((k for k in MULTIPLES if close(values, scaled(grad, k))), None)


def ran(k: int) -> str:
    """"ran twice" and so on, for a count of backward passes."""
    if k == 0:
        return msg("never ran")
    if k == 1:
        return msg("ran once")
    if k == 2:
        return msg("ran twice")
    return msg("ran {k} times", k=k)


def not_the_grad(subject: str, value: Any, case: dict[str, Any], expected: dict[str, Any],
                 runs: int, aliased: bool = False, returned_backward: bool = False,
                 returned: bool = False) -> str:
    """Why `value` (described as `subject`, e.g. `msg("You returned")`) is not the gradient.

    `runs` is how many backward passes reached w; `aliased` says the value was the very
    tensor still in w.grad when the function returned; `returned_backward` that the function
    returned what a backward call gave (`return loss.backward()`); `returned` that the value
    is what the function returned (rather than one of the values it returned).
    """
    if value is None:
        if runs == 0:
            return msg("{subject} None: backward never ran, so w.grad was still None. "
                       "PyTorch creates .grad only when a backward pass reaches w.",
                       subject=subject)
        if returned_backward:
            return msg("{subject} None, which is what backward() returns: backward() stores "
                       "the gradient in .grad and hands back nothing. Look at what your "
                       "function returns after the backward call.", subject=subject)
        if returned:
            return msg("{subject} None: w.grad was read before backward filled it, or the "
                       "function has no `return`.", subject=subject)
        return msg("{subject} None: w.grad was read before backward filled it.",
                   subject=subject)
    if isinstance(value, dict):
        kind = value.get("not_a_tensor", "object")
        if (name := uncalled(value)) is not None:
            return uncalled_words(name)
        if kind == "ellipsis":
            return msg("{subject} `...`, the starter's placeholder: replace it with your code.",
                       subject=subject)
        if "number" in value and close(value["number"], expected["loss"]):
            return msg("{subject} the loss as a Python {kind}, not its gradient: the gradient "
                       "is the tensor in w.grad.", subject=subject, kind=kind)
        if kind in ("float", "int", "list"):
            return msg("{subject} a Python {kind}, not a tensor: the gradient was turned into "
                       "plain numbers on its way out. Look at what your function does to it "
                       "before it returns.", subject=subject, kind=kind)
        return msg("{subject} an object of type {kind}, not the gradient tensor w.grad.",
                   subject=subject, kind=kind)
    k = multiple_of(value, expected["grad"])
    if k == 0:
        if aliased:
            return msg("{subject} a tensor of zeros: w.grad was zeroed in place (zero_()) "
                       "before your function ended, and what you kept is that same tensor, "
                       "so it shows the zeros too. Use w.grad.clone() to keep a copy, or do "
                       "not clear it.", subject=subject)
        return msg("{subject} a tensor of zeros, not the gradient.", subject=subject)
    if k is not None and k > 1:
        if runs == k:
            return msg("{subject} {k}x the gradient: backward {ran}, and each call adds into "
                       "w.grad.", subject=subject, k=k, ran=ran(k))
        return msg("{subject} {k}x the gradient, though backward {ran}: something scaled it "
                   "(a scaled loss, or arithmetic on w.grad).", subject=subject, k=k,
                   ran=ran(runs))
    if shape(value) == () and close(value, expected["loss"]):
        return msg("{subject} the loss, not its gradient: the gradient is in w.grad, and it "
                   "has the same shape as w.", subject=subject)
    if close(value, case["w"]):
        return msg("{subject} w itself, not its gradient w.grad.", subject=subject)
    if shape(value) != shape(case["w"]):
        return msg("{subject} a tensor of shape {shape}, but the gradient has w's shape, "
                   "{w_shape}.", subject=subject, shape=str(list(shape(value))),
                   w_shape=str(list(shape(case["w"]))))
    return msg("{subject} a tensor that is not the gradient of the loss with respect to w.",
               subject=subject)


def loss_words(case: dict[str, Any]) -> str:
    """The case's loss as a learner would write it for this w: the weighted loss with its
    weights spelled out (`(w * [1, 2]).sum()`), since the learner cannot see them elsewhere."""
    if case["loss"] != "weighted":
        return LOSSES[case["loss"]]
    dims = shape(case["w"])
    weights: list[Any] = list(range(1, len(flat(case["w"]) or []) + 1))
    return f"(w * {nest(weights, dims)}).sum()"


# ---- the family: fn(w, loss_fn) on a fresh leaf w and a named loss ---------------------

def _observe_leaf(case: dict[str, Any], fn: Any, trace: Any,
                  catches: tuple[str, ...]) -> dict[str, Any]:
    """`observe_returned`, and when the function returned two values, each of them; an error
    named in `catches` becomes data (its first sentence), so a check can name the mistake."""
    calls = [0]  # how often the function called loss_fn: each call builds a graph of its own
    try:
        seen = _leaf_call(case, fn, trace, calls)
    except RuntimeError as exc:
        said = str(exc)
        caught = [name for name in catches if CATCHABLE[name] in said]
        if not caught:
            raise
        first = said.strip().splitlines()[0]
        end = first.find(". ")
        return {"caught": caught[0], "said": first[:end + 1] if end > 0 else first,
                "events": list(trace.events), "loss_calls": calls[0]}
    return seen


def _leaf_call(case: dict[str, Any], fn: Any, trace: Any, calls: list[int]) -> dict[str, Any]:
    w = fresh_leaf(case)
    trace.watch({"w": w})
    loss = build_loss(case["loss"])

    def loss_fn(value: Any) -> Any:
        calls[0] += 1
        return loss(value)

    returned = fn(w, loss_fn)
    seen = {"returned": plain(trace, returned), "returned_is_grad": returned is w.grad,
            "grad_after": trace.values(w.grad), "events": list(trace.events),
            "returns_backward": returns_backward(fn), "loss_calls": calls[0]}
    if isinstance(returned, (tuple, list)):
        seen["length"] = len(returned)
        if len(returned) == 2:
            first, second = returned  # only trace.values' plain copies leave this function
            seen.update(first=plain(trace, first), second=plain(trace, second),
                        first_is_grad=first is not None and first is w.grad,
                        second_is_grad=second is w.grad,
                        same=first is not None and first is second)
    return seen


LEAF_FACTS = frozenset({
    "w", "gradient", "loss", "backward-count", "ran", "zero-grad-count",
    "grad-after-each-backward", "grad-after-second-backward", "graph-freed", "returned",
    "returned-is-grad", "returns-backward", "returned-words", "grad-after", "pair", "length",
    "same", "returned-times", "grad-after-times", "returned-kind", "grad-after-kind",
    "loss-calls"})


def _leaf_names(parts: tuple[str, ...]) -> frozenset[str]:
    return LEAF_FACTS | {f"{part}{suffix}" for part in parts
                         for suffix in ("", "-is-grad", "-times", "-kind")}


def _leaf_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
                parts: tuple[str, ...]) -> Facts:
    runs = backward_runs(observed)
    steps = accumulations(observed)
    facts: Facts = {
        "w": case["w"], "gradient": reference["grad"], "loss": reference["loss"],
        "backward-count": runs, "ran": ran(runs),
        "zero-grad-count": count(observed["events"], "zero_grad"),
        "grad-after-each-backward": then([fmt(step) for step in steps]) or msg(
            "no backward ran"),
        "grad-after-second-backward": steps[1] if len(steps) > 1 else None,
        "graph-freed": (f"RuntimeError: {observed['said']}"
                        if observed.get("caught") == "graph-freed" else None),
        "loss-calls": observed["loss_calls"],
    }
    if "caught" in observed:
        return facts
    facts.update({
        "returned": observed["returned"], "returned-is-grad": observed["returned_is_grad"],
        "returns-backward": observed["returns_backward"], "grad-after": observed["grad_after"],
        "returned-words": _described(observed),
        "pair": observed.get("length") == 2, "length": observed.get("length"),
        "same": bool(observed.get("same")),
    })
    if facts["pair"] and len(parts) == 2:
        for part, key in zip(parts, ("first", "second"), strict=True):
            facts[part] = observed[key]
            facts[f"{part}-is-grad"] = observed[f"{key}_is_grad"]
    for name in ("returned", "grad-after", *parts):
        if name in facts:
            facts[f"{name}-times"] = multiple_of(facts[name], reference["grad"])
            value = facts[name]
            facts[f"{name}-kind"] = (value.get("not_a_tensor", "object")
                                     if isinstance(value, dict) else None)
    return facts


def then(values: list[str]) -> str:
    """`a then b then c`: values one after another, as a message."""
    if len(values) <= 1:
        return values[0] if values else ""
    return msg("{earlier} then {later}", earlier=then(values[:-1]), later=values[-1])


def _described(observed: dict[str, Any]) -> str:
    """What the function returned, in words: "None (is `return` missing?)", "a tuple of 3
    values", "a single tensor, [1, 2]"."""
    returned = observed["returned"]
    if observed.get("length") is not None:
        return msg("a {kind} of {length} values", kind=returned["not_a_tensor"],
                   length=observed["length"])
    if returned is None:
        return msg("None (is `return` missing?)")
    if isinstance(returned, dict):
        return msg("a {kind}", kind=returned["not_a_tensor"])
    return msg("a single tensor, {value}", value=fmt(returned))


def _leaf_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("w", "loss_fn(w)"), (fmt(case["w"]), loss_words(case))


def _not_the_gradient(facts: Facts, data: Data, value: str, subject: str) -> str:
    """Why the fact `value` is not the gradient (`grad_reading.not_the_grad`)."""
    case = {"w": facts["w"]}
    expected = {"grad": facts["gradient"], "loss": facts["loss"]}
    returned = value == "returned"
    return not_the_grad(subject, facts[value], case, expected, facts["backward-count"],
                        bool(facts.get(f"{value}-is-grad")),
                        returned and bool(facts.get("returns-backward")), returned)


FAMILY = Family(
    arity=2, names=_leaf_names, cases=leaf_cases, reference=reference, observe=_observe_leaf,
    facts=_leaf_facts, columns=_leaf_columns,
    explainers={"not-the-gradient": _not_the_gradient}, valued=frozenset({"not-the-gradient"}))
