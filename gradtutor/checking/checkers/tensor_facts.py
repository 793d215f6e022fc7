"""The `leaf-fn` input family (`FAMILY`, registered in `families.py`): the function gets a
fresh leaf `w` and returns one value, and what is observed is what that value is to autograd:
a tensor or a Python number, its dtype and shape, whether it requires grad, is a leaf, which
node made it (`grad_fn`), whether it shares w's memory, whether a backward from it would reach
w; and what became of w and of grad mode. `values_facts.py` (`values-fn`) describes a returned
value the same way (`described`, `returned_facts`).

The worker side (`leaf_cases`, `observe_leaf_fn`, `described`) imports torch inside its
functions; the tutor side (`leaf_fn_facts`, `returned_facts`, the columns) is pure.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import count, fmt, seeded_values
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.grad_reading import plain

# Vectors and small matrices, as weights come in both.
SHAPES: tuple[tuple[int, ...], ...] = ((2,), (3,), (4,), (2, 2), (2, 3), (3, 2))
LONGEST_WALK = 10_000  # graph nodes looked at when asking whether a result reaches w


# ---- cases (worker; plain data) ---------------------------------------------------------

def leaf_cases(seed: int) -> list[dict[str, Any]]:
    """Four values of w, of different shapes, each entry away from zero."""
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)
    shapes = rng.sample(SHAPES, k=4)
    return [{"w": seeded_values(rng, dims, 0.1, 2.0, 2)} for dims in shapes]


def leaf(case: dict[str, Any]) -> Any:
    """The case's `w` as a new float32 leaf that requires grad (worker side)."""
    import torch

    return torch.tensor(case["w"], dtype=torch.float32, requires_grad=True)


# ---- observing (worker) -----------------------------------------------------------------

def _read(value: Any, name: str) -> Any:
    """An attribute of a tensor read through PyTorch's C type, whatever Python properties a
    subclass or learner code put in front of it."""
    import torch

    return vars(torch._C.TensorBase)[name].__get__(value)


def described(trace: Any, value: Any, w: Any = None, w_node: Any = None) -> dict[str, Any]:
    """What `value` is to autograd, as plain data: its values (`trace.values`, with the number
    itself for a Python int or float) and, for a tensor, its dtype, shape, requires_grad,
    is_leaf, the name of its grad_fn and of the nodes that one points back to; with `w`, also
    whether it shares w's memory and whether its graph reaches w's gradient node `w_node`."""
    import torch

    seen: dict[str, Any] = {"returned": plain(trace, value)}
    if not trace.is_tensor(value) or isinstance(seen["returned"], dict):
        return seen  # not a tensor, or a subclass the trace refuses to read
    node = _read(value, "grad_fn")
    seen.update(
        dtype=str(_read(value, "dtype")).removeprefix("torch."),
        shape=list(_read(value, "shape")),
        requires_grad=bool(_read(value, "requires_grad")),
        is_leaf=bool(_read(value, "is_leaf")),
        grad_fn=_node_name(node) if node is not None else None,
        next_functions=([_node_name(n) for n, _ in node.next_functions if n is not None]
                        if node is not None else None),
    )
    if w is not None:
        with torch._C.DisableTorchFunctionSubclass():
            storage = torch._C.TensorBase.untyped_storage
            seen["shares_memory"] = (value is w or storage(value).data_ptr()
                                     == storage(w).data_ptr())
        seen["reaches_w"] = value is w or _reaches(node, w_node)
    return seen


def _node_name(node: Any) -> str:
    """A graph node's name as PyTorch prints it: `MulBackward0`, `AccumulateGrad` (whose
    own name() is `torch::autograd::AccumulateGrad`)."""
    return str(node.name()).rpartition("::")[2]


def _reaches(node: Any, target: Any) -> bool:
    """Whether `target` (a leaf's gradient node) is reachable from `node` by next_functions:
    whether a backward from this result would put a gradient into that leaf. Walked, not run,
    so a graph that backward already freed is read as well as a live one."""
    stack, seen = [node], set[int]()
    while stack and len(seen) < LONGEST_WALK:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        if current == target:
            return True
        seen.add(id(current))
        stack += [n for n, _ in current.next_functions]
    return False


def call(fn: Any, argument: Any, calls: Any = None) -> tuple[Any, bool]:
    """fn(argument), with `calls` (a `trace.Calls`) entered around it if given, and whether
    grad mode was still on afterwards; grad mode is switched back on either way, so one
    case's mistake does not leak into the next."""
    import contextlib

    import torch

    try:
        with calls if calls is not None else contextlib.nullcontext():
            returned = fn(argument)
        return returned, bool(torch.is_grad_enabled())
    finally:
        torch.set_grad_enabled(True)


def observe_leaf_fn(case: dict[str, Any], fn: Any, trace: Any,
                    catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """fn(w) on a fresh leaf w: the returned value described, what the function recorded
    and which call made the value (`trace.Calls`), and w afterwards."""
    import torch

    from gradtutor.checking.trace import Calls, real_grad

    w = leaf(case)
    trace.watch({"w": w})
    w_node = torch.autograd.graph.get_gradient_edge(w).node
    calls = Calls()
    returned, grad_enabled = call(fn, w, calls)
    return {**described(trace, returned, w, w_node), "grad_enabled_after": grad_enabled,
            "recorded": list(calls.recorded), "made_by": calls.made_by(returned),
            "w_after": trace.values(w),
            "w_requires_grad_after": bool(_read(w, "requires_grad")),
            "grad_after": trace.values(real_grad(w)), "events": list(trace.events)}


def no_reference(case: dict[str, Any]) -> dict[str, Any]:
    """These families know no truth of their own: checks compare with the solution."""
    return {}


# ---- facts (tutor; pure) ----------------------------------------------------------------

RETURNED_FACTS = frozenset({
    "returned", "returned-kind", "number", "tensor", "dtype", "shape", "requires-grad",
    "is-leaf", "grad-fn", "next-functions", "grad-enabled-after"})
LEAF_FN_FACTS = RETURNED_FACTS | {
    "w", "shares-memory", "reaches-w", "w-after", "w-requires-grad-after", "grad-after",
    "backward-count", "recorded", "made-by"}


def returned_facts(observed: dict[str, Any]) -> dict[str, Any]:
    """The facts of the returned value: each tensor attribute is None when no tensor came
    back; `number` is the number itself when a Python int or float came back."""
    returned = observed["returned"]
    is_tensor = returned is not None and not isinstance(returned, dict)
    return {
        "returned": returned,
        "returned-kind": (returned.get("not_a_tensor", "object") if isinstance(returned, dict)
                          else "tensor" if is_tensor else "None"),
        "number": returned.get("number") if isinstance(returned, dict) else None,
        "tensor": is_tensor,
        "dtype": observed.get("dtype"),
        "shape": str(observed["shape"]) if "shape" in observed else None,
        "requires-grad": observed.get("requires_grad"),
        "is-leaf": observed.get("is_leaf"),
        "grad-fn": observed.get("grad_fn"),
        "next-functions": (", ".join(observed["next_functions"]) or "()"
                           if observed.get("next_functions") is not None else None),
        "grad-enabled-after": observed["grad_enabled_after"],
    }


def leaf_fn_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
                  parts: tuple[str, ...]) -> dict[str, Any]:
    return {**returned_facts(observed), "w": case["w"],
            "shares-memory": observed.get("shares_memory"),
            "reaches-w": observed.get("reaches_w"),
            "w-after": observed["w_after"],
            "w-requires-grad-after": observed["w_requires_grad_after"],
            "grad-after": observed["grad_after"],
            "backward-count": count(observed["events"], "accumulate"),
            # the graph nodes recorded while the function ran, as words ("MulBackward0,
            # AddBackward0"), or None when it recorded nothing
            "recorded": ", ".join(observed.get("recorded") or ()) or None,
            "made-by": observed.get("made_by")}


def leaf_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("w",), (fmt(case["w"]),)


FAMILY = Family(arity=1, names=lambda parts: LEAF_FN_FACTS, cases=leaf_cases,
                reference=no_reference, observe=observe_leaf_fn, facts=leaf_fn_facts,
                columns=leaf_columns)
