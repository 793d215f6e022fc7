"""What the doctor's probe reads of autograd graphs, inside the learner's process: the leaves a
backward from some tensors reaches, what a loss was divided by, whether a graph is held by
anyone but the probe, and the calls that take a tensor's values without its graph (`.detach()`,
`.item()`, `torch.tensor(...)`, a parameter's `.data`...), watched so that a cut graph is
reported where it was cut.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from types import FrameType
from typing import Any

# Each call that hands back a tensor's values without its graph, as a report names it. `.data`
# is an attribute, not a call: it is watched on parameters only (DATA), and a graph cut by the
# `.data` of an activation is reported as not seen.
CUT_METHODS: Mapping[str, str] = {
    "detach": ".detach()", "detach_": ".detach_()", "item": ".item()", "tolist": ".tolist()",
    "numpy": ".numpy()", "__float__": "float()"}
CUT_FUNCTIONS: Mapping[str, str] = {"tensor": "torch.tensor(...)"}
DATA = ".data"
MAX_HELD = 64  # the items of a list handed to torch.tensor looked at

# cut(how, tensors with a graph, the caller's frame): what the probe does with a call seen
Cut = Callable[[str, list[Any], FrameType], None]


def graph_leaves(torch: Any, roots: Iterable[Any]) -> tuple[list[Any], set[int]]:
    """The leaves a backward from the graph nodes `roots` reaches, and the ids of the nodes on
    the way."""
    seen: set[int] = set()
    leaves = []
    stack = [fn for fn in roots if fn is not None]
    accumulate = getattr(torch._C._functions, "AccumulateGrad", None)
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if (accumulate is not None and type(fn) is accumulate) or (
                accumulate is None and type(fn).__name__ == "AccumulateGrad"):
            leaves.append(fn.variable)
            continue
        stack.extend(nxt for nxt, _ in fn.next_functions if nxt is not None)
    return leaves, seen


def tensor_leaves(torch: Any, tensors: Iterable[Any]) -> list[Any]:
    """The leaves whose gradients `tensors` carry: a leaf itself, or those its graph reaches."""
    tensors = list(tensors)
    found, _ = graph_leaves(torch, [t.grad_fn for t in tensors])
    return found + [t for t in tensors if t.grad_fn is None and t.requires_grad]


def version(tensor: Any) -> int:
    """The tensor's version counter; -1 for a tensor made under torch.inference_mode(), which
    has none (reading it raises)."""
    return -1 if tensor.is_inference() else int(tensor._version)


def divisor(fn: Any) -> float | None:
    """What the loss was divided by at its last operations (`loss / k`, `loss * (1/k)`), read
    from the graph node `fn`; 1.0 when it was not."""
    factor = 1.0
    for _ in range(4):
        name = type(fn).__name__ if fn is not None else ""
        if name not in ("DivBackward0", "DivBackward1", "MulBackward0", "MulBackward1"):
            break
        other = getattr(fn, "_saved_other", None)
        if other is None or (hasattr(other, "numel") and other.numel() != 1):
            break
        value = float(other.detach() if hasattr(other, "detach") else other)
        if value == 0:
            return None
        factor *= value if name.startswith("Div") else 1.0 / value
        fn = fn.next_functions[0][0]
    return factor


def discarded_count(torch: Any) -> int | None:
    """What `sys.getrefcount` says of a graph node held in a `pending` entry alone, measured
    on this Python (whose count of its own argument may differ); None when it cannot tell a
    graph let go of from one alive, and unused graphs go unseen."""
    leaf = torch.ones(1, requires_grad=True)
    result = leaf * 2
    entry = [(result.grad_fn,)]
    alive = sys.getrefcount(entry[0][0])
    del result
    gone = sys.getrefcount(entry[0][0])
    return gone if gone < alive else None


def watch_cuts(torch: Any, cut: Cut) -> None:
    """Wrap the calls of CUT_METHODS and CUT_FUNCTIONS: after each call that returns on a
    tensor that has a graph (requires grad), `cut` is told how, the tensors, and the caller's
    frame (it keeps only the script's own calls). A call on a tensor without a graph costs
    one attribute read."""
    tensor_type = torch.Tensor

    def first(args: tuple[Any, ...], _kwargs: dict[str, Any]) -> list[Any]:
        return list(args[:1])

    def data(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        value = args[0] if args else kwargs.get("data")
        return list(value[:MAX_HELD]) if isinstance(value, list | tuple) else [value]

    for name, how in CUT_METHODS.items():
        if hasattr(tensor_type, name):
            _wrap(tensor_type, name, how, first, tensor_type, cut)
    for name, how in CUT_FUNCTIONS.items():
        _wrap(torch, name, how, data, tensor_type, cut)
    _watch_data(torch, cut)


def _watch_data(torch: Any, cut: Cut) -> None:
    """`.data` of a parameter that requires grad: `cut` is told, as for a call. nn.Parameter is
    a Python class, so a property there shadows the tensor's own attribute for parameters
    alone; activations and buffers keep theirs, at no cost."""
    base = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase", None)
    attribute = getattr(base, "data", None)
    if attribute is None or not hasattr(attribute, "__get__") or "data" in vars(
            torch.nn.Parameter):
        return

    def get(self: Any) -> Any:
        value = attribute.__get__(self)
        if self.requires_grad:
            cut(DATA, [self], sys._getframe(1))
        return value

    def put(self: Any, value: Any) -> None:
        attribute.__set__(self, value)

    torch.nn.Parameter.data = property(get, put, doc=attribute.__doc__)


def _wrap(owner: Any, name: str, how: str,
          held: Callable[[tuple[Any, ...], dict[str, Any]], list[Any]], tensor_type: Any,
          cut: Cut) -> None:
    original = getattr(owner, name)

    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            graphs = [t for t in held(args, kwargs)
                      if isinstance(t, tensor_type) and t.requires_grad]
        except Exception:  # noqa: BLE001 - odd arguments are the call's own business
            graphs = []
        result = original(*args, **kwargs)
        if graphs:  # told once the call has worked: one that raised cut nothing
            cut(how, graphs, sys._getframe(1))
        return result

    watched.__wrapped__ = original  # type: ignore[attr-defined]
    watched.__name__ = getattr(original, "__name__", name)
    watched.__doc__ = getattr(original, "__doc__", None)
    setattr(owner, name, watched)
