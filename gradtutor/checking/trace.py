"""What learner code did to gradients, as an event trace of plain data. Runs in the worker.

`install()` must run before any learner code is loaded: it keeps references to the real
torch functions (so a learner who replaces `Tensor.backward` cannot hide from it), wraps the
calls that have no hook (backward, zero_grad), and registers PyTorch's global hooks
(optimizer step, module forward). Per-parameter post-accumulate-grad hooks are added by
`Trace.watch` for the tensors a checker builds.

Events are dicts: {"event": "backward", "entries": n} (n: how many numbers it started
from), {"event": "zero_grad", "by": "optimizer"|"module",
"set_to_none": bool}, {"event": "forward"}, {"event": "before_step", "grads": ...} (the
gradients an optimizer step updates with), {"event": "step", "grads": {name: values|None}}
(after it), {"event": "accumulate", "param": name, "grad": values}, {"event": "clip",
"total": number} (a call of `clip_grad_norm_` and the total norm it measured).

`before_step` is recorded when step() reads .grad, not when it is called: with the closure
API, `optimizer.step(closure)`, the closure clears .grad and runs backward inside step(), so
what .grad held at the call is not what the update used. torch's own optimizers call their
closure first thing, then read .grad; the trace hands them a closure of its own that runs
the learner's (if any) and then records.

Learner code runs in this process, so the trace guards what it can against forgery:
an `accumulate` event is recorded only when autograd's engine is really running a backward
pass whose graph reaches that tensor (a hook called by hand, or from an unrelated backward,
is counted in `forged` instead); `events` is a copy, so appending to it or editing an event
changes nothing recorded; `note` takes only the kinds a checker records itself; and a Tensor
subclass is read as the plain tensor it holds (its `__torch_function__` is not consulted),
or refused when it overrides `__torch_dispatch__`. Code that reaches into the trace's private
state can still change it: docs/isolation.md says what remains.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

import torch  # this module only ever runs in the checking worker
from torch.nn.modules.module import register_module_forward_hook
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.overrides import TorchFunctionMode

from gradtutor.checking.bytecode import instructions

# Taken when this module is imported, before any learner code exists: a learner who later
# replaces Tensor.tolist or adds a `grad` property cannot change what the trace reports.
_TENSOR = torch.Tensor
_BASE = torch._C.TensorBase
_TOLIST = _BASE.tolist
_DETACH = _BASE.detach
_CLONE = _BASE.clone
_DOUBLE = _BASE.double
_GRAD = vars(_BASE)["grad"].__get__  # the C attribute itself, not any Python override
_PARAMETER = torch.nn.Parameter
_PLAIN = torch._C.DisableTorchFunctionSubclass  # a subclass's __torch_function__ is not asked
_DEFAULT_DISPATCH = vars(_BASE).get("__torch_dispatch__", torch._C._disabled_torch_dispatch_impl)
_GRAD_FN = vars(_BASE)["grad_fn"].__get__
_AUTOGRAD_GRAD = torch.autograd.grad  # the real one, whatever learner code rebinds later
_GRADIENT_EDGE = torch.autograd.graph.get_gradient_edge
_ENGINE_RUNS = torch._C._will_engine_execute_node  # raises outside a backward pass
_TYPE = type
_ISSUBCLASS = issubclass
_VARS = vars
_RUNTIME_ERROR = RuntimeError
# The types of a function or method that was named but not called (`total.item`, `model.eval`,
# `len`), whose `__name__` names what the learner wrote.
_CALLABLES = (types.BuiltinFunctionType, types.MethodType, types.FunctionType,
              types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)
_STR = str

# The kinds of event the trace records itself; a checker's `note` may not add these.
RECORDED = frozenset({"backward", "zero_grad", "forward", "before_step", "step", "accumulate",
                      "clip"})


def real_grad(tensor: torch.Tensor) -> torch.Tensor | None:
    """`tensor.grad`, read through the C attribute."""
    return _GRAD(tensor)  # type: ignore[no-any-return]


def _copy(value: Any) -> Any:
    """A deep copy of plain data (dicts, lists, tuples; the rest is immutable)."""
    if _TYPE(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if _TYPE(value) in (list, tuple):
        return [_copy(item) for item in value]
    return value


def _overrides_dispatch(kind: type) -> bool:
    """Whether a Tensor subclass answers torch's operators itself (`__torch_dispatch__`):
    then even its detach and clone could return numbers it never held."""
    return any("__torch_dispatch__" in _VARS(base) and
               _VARS(base)["__torch_dispatch__"] is not _DEFAULT_DISPATCH
               for base in kind.__mro__ if base is not _BASE)


def uncalled(value: Any) -> dict[str, str]:
    """For a function or method handed back instead of called (`return total.item`), its name
    as `{"uncalled": "item"}` (a lambda's is `<lambda>`); for anything else, nothing."""
    if _TYPE(value) not in _CALLABLES:
        return {}
    try:  # a bound method's name is its function's, which may be any object's
        name = value.__name__
    except Exception:  # noqa: BLE001 - a name that cannot be read is not reported
        return {}
    return {"uncalled": name[:40]} if _TYPE(name) is _STR else {}


def uncalled_lines(fn: Any) -> list[str]:
    """The methods and functions a line of `fn` only names, without calling them (`model.eval`
    or `pred.retain_grad` on a line of its own), read from its bytecode: an attribute loaded
    and at once thrown away, as `model.eval` (`.eval` when what it is read from has no
    name). Only names of torch's functions or of a tensor's, module's or optimizer's
    methods count, so a line that names data (`x.grad`) is not taken for one. What a helper
    function that `fn` calls does is not read."""
    def read(code: Any, depth: int = 0) -> list[str]:
        found: list[str] = []
        ops = instructions(code)
        for at in range(1, len(ops) - 1):
            op, before = ops[at], ops[at - 1]
            if (op.opname in ("LOAD_ATTR", "LOAD_METHOD") and ops[at + 1].opname == "POP_TOP"
                    and _TYPE(op.argval) is _STR and torch_callable(op.argval)):
                owner = (f"{before.argval}." if before.opname in _NAMED
                         and _TYPE(before.argval) is _STR else ".")
                found.append(owner + op.argval)
        for const in code.co_consts:  # a nested def or a comprehension's own code
            if _TYPE(const) is types.CodeType and depth < 3:
                found += read(const, depth + 1)
        return found

    if _TYPE(fn) is not types.FunctionType:  # its __code__ is then Python's own attribute
        return []
    try:
        return list(dict.fromkeys(read(fn.__code__)))[:5]
    except Exception:  # noqa: BLE001 - odd bytecode is simply not read
        return []


_NAMED = ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF")  # `model` in `model.eval`


def uncalled_returns(fn: Any) -> dict[str, str]:
    """For each method `fn` returns without calling it, read from its bytecode, the expression
    as written: `return total.item` gives {"item": "total.item"}, `return w.grad.clone` gives
    {"clone": "w.grad.clone"}. A method read from something without a name (`return (w *
    2).sum().item`) is not listed; neither is what a helper function that `fn` calls
    returns."""
    if _TYPE(fn) is not types.FunctionType:
        return {}
    try:
        ops = instructions(fn.__code__)
    except Exception:  # noqa: BLE001 - odd bytecode is simply not read
        return {}
    found: dict[str, str] = {}
    for at in range(1, len(ops) - 1):
        if not (ops[at].opname in ("LOAD_ATTR", "LOAD_METHOD")
                and ops[at + 1].opname == "RETURN_VALUE"):
            continue
        start = at  # back along `a.b.c` to the name it starts from
        while start > 0 and ops[start - 1].opname == "LOAD_ATTR":
            start -= 1
        chain = [op.argval for op in ops[max(start - 1, 0):at + 1]]
        if (start > 0 and ops[start - 1].opname in _NAMED
                and all(_TYPE(part) is _STR for part in chain)):
            found.setdefault(chain[-1], ".".join(chain)[:40])
    return found


def named_uncalled(observed: Any, written: dict[str, str]) -> Any:
    """`observed` with each function named as never called (`{"uncalled": "item"}`) named by
    the expression the learner wrote for it (`total.item`), where `written` has it."""
    if _TYPE(observed) is dict:
        return {key: (written.get(value, value) if key == "uncalled" and _TYPE(value) is _STR
                      else named_uncalled(value, written)) for key, value in observed.items()}
    if _TYPE(observed) is list:
        return [named_uncalled(item, written) for item in observed]
    return observed


def torch_callable(name: str) -> bool:
    """Whether `name` is a method of a tensor, module or optimizer, or a function of torch's."""
    return not name.startswith("_") and any(
        callable(getattr(owner, name, None))
        for owner in (_TENSOR, torch.nn.Module, torch.optim.Optimizer, torch))


class Trace:
    """The event log of one case, with snapshots taken through the real torch functions."""

    def __init__(self) -> None:
        self._events: list[dict[str, Any]] = []
        self.names: dict[int, str] = {}  # id(tensor) -> the name the checker gave it
        self.forged = 0  # accumulations claimed outside a real backward pass, not recorded
        self._handles: list[Any] = []

    @property
    def events(self) -> list[dict[str, Any]]:
        """The events so far, as a copy: changing it changes nothing recorded."""
        return _copy(self._events)  # type: ignore[no-any-return]

    def note(self, event: dict[str, Any]) -> None:
        """Add an event of the checker's own (a kind the trace does not record itself)."""
        if event.get("event") in RECORDED:
            raise ValueError(f"the trace records {event.get('event')!r} events itself")
        self._events.append(_copy(event))

    def _record(self, event: dict[str, Any]) -> None:
        self._events.append(event)

    def is_tensor(self, value: Any) -> bool:
        # type() is the real one even if learner code rebinds torch.is_tensor or isinstance tricks
        return isinstance(value, _TENSOR) and _ISSUBCLASS(_TYPE(value), _TENSOR)

    def values(self, value: Any) -> Any:
        """A tensor as nested lists of floats (a plain copy), None as None; else a description.

        A Tensor subclass is read as the plain tensor it holds, with its `__torch_function__`
        switched off (so a class that answers `tolist` with other numbers is not believed);
        one that overrides `__torch_dispatch__` is refused, as not a tensor."""
        if value is None:
            return None
        if not self.is_tensor(value):
            return {"not_a_tensor": _TYPE(value).__name__, **uncalled(value)}
        kind = _TYPE(value)
        if kind is not _TENSOR and kind is not _PARAMETER and _overrides_dispatch(kind):
            return {"not_a_tensor": kind.__name__, "tensor_subclass": True}
        with _PLAIN():
            return _TOLIST(_DOUBLE(_CLONE(_DETACH(value))))

    def uncalled(self, value: Any) -> dict[str, str]:
        """`uncalled(value)`: for a checker that describes a returned value its own way."""
        return uncalled(value)

    def watch(self, named: dict[str, torch.Tensor]) -> None:
        """Record every gradient accumulated into these leaf tensors, by name.

        Each hook knows its tensor's gradient accumulator (the node of autograd's graph that
        writes its .grad), taken now, before the learner's function runs; it records only
        while the engine runs a backward pass that executes that node."""
        for name, tensor in named.items():
            self.names[id(tensor)] = name
            node = _GRADIENT_EDGE(tensor).node

            def hook(param: torch.Tensor, name: str = name, node: Any = node) -> None:
                try:
                    real = bool(_ENGINE_RUNS(node))
                except _RUNTIME_ERROR:  # not inside a backward pass at all
                    real = False
                if not real:
                    self.forged += 1
                    return
                self._record({"event": "accumulate", "param": name,
                              "grad": self.values(real_grad(param))})

            self._handles.append(tensor.register_post_accumulate_grad_hook(hook))  # type: ignore[no-untyped-call]

    def grads(self, params: list[torch.Tensor]) -> dict[str, Any]:
        return {self.names.get(id(p), f"param{i}"): self.values(real_grad(p))
                for i, p in enumerate(params)}

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


# Torch calls whose result holds its input's numbers as they were (a copy, a view, another
# dtype): such a result comes from wherever its input came from (`Calls.origin`).
_COPIES = frozenset({"clone", "detach", "detach_", "to", "double", "float", "contiguous", "cpu",
                     "reshape", "reshape_as", "view", "view_as", "type", "type_as",
                     "requires_grad_", "__deepcopy__", "data"})


class Calls(TorchFunctionMode):
    """What a function did with torch while it ran, entered around one call of it: the graph
    nodes its operations recorded (`recorded`: the `grad_fn` names of their results, each
    once, in order), how often it called `torch.autograd.grad` (`autograd_grads`), which
    torch function or method first made a given tensor (`made_by`), and where its numbers
    came from (`origin`). A torch function mode, so it sees every operator, method and
    function of torch's, at any depth of the learner's code; what it keeps is names and
    counts, and a weak reference per result."""

    KEPT = 10_000  # results remembered for `made_by`; a longer run forgets the later ones
    NAMED = 8  # recorded nodes named

    def __init__(self) -> None:
        super().__init__()
        self.recorded: list[str] = []
        self.autograd_grads = 0
        self._made: dict[int, tuple[str, Any]] = {}
        self._origins: dict[int, tuple[str | None, Any]] = {}

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func is _AUTOGRAD_GRAD:
            self.autograd_grads += 1
        for result in (out if _TYPE(out) in (tuple, list) else (out,)):
            if isinstance(result, _BASE):
                self._note(func, result, args)
        return out

    def _note(self, func: Any, result: Any, args: Any) -> None:
        with _PLAIN():
            node = _GRAD_FN(result)
        name = _TYPE(node).__name__ if node is not None else None
        if name is not None and name not in self.recorded and len(self.recorded) < self.NAMED:
            self.recorded.append(name)
        called = getattr(func, "__name__", None)
        called = called[:40] if _TYPE(called) is _STR else "?"
        made = self._made.get(id(result))
        if (made is None or made[1]() is None) and len(self._made) < self.KEPT:
            self._made[id(result)] = (called, weakref.ref(result))
        self._note_origin(func, called, result, args)

    def _note_origin(self, func: Any, called: str, result: Any, args: Any) -> None:
        """Where `result`'s numbers came from: `.grad` for a tensor read from a `.grad` (what
        autograd's engine filled), `autograd.grad` for what that function returned, the
        input's origin for a copy of it, else the torch call that made it. An in-place
        operation that changes a tensor's numbers (`g.mul_(2)`) makes it that operation's."""
        if called == "__get__":  # an attribute read: `t.grad`, `t.data`
            called = getattr(getattr(func, "__self__", None), "__name__", "?")
            called = called if _TYPE(called) is _STR else "?"
        if func is _AUTOGRAD_GRAD:
            origin: str | None = "autograd.grad"
        elif called == "grad":
            origin = ".grad"
        elif called in _COPIES and args and isinstance(args[0], _BASE):
            origin = self.origin(args[0])
        else:
            origin = called
        known = self._origins.get(id(result))
        in_place = called.endswith("_") and called not in _COPIES and bool(args) and (
            args[0] is result)
        if (known is None or known[1]() is not result or in_place) and (
                len(self._origins) < self.KEPT):
            self._origins[id(result)] = (origin, weakref.ref(result))

    def origin(self, value: Any) -> str | None:
        """Where the tensor `value`'s numbers came from, as `_note_origin` names it; None for
        a tensor no torch call made while this was entered (an input, or a gradient that
        autograd's engine handed to a hook)."""
        known = self._origins.get(id(value))
        return known[0] if known is not None and known[1]() is value else None

    def made_by(self, value: Any) -> str | None:
        """The name of the torch function or method whose result `value` first was (`tensor`,
        `detach`, `stack`), or None for a value no torch call made while this was entered."""
        made = self._made.get(id(value))
        return made[0] if made is not None and made[1]() is value else None


_current: list[Trace] = []


def current() -> Trace | None:
    return _current[-1] if _current else None


def start() -> Trace:
    """Begin a fresh trace for one case; events go to it until the next start()."""
    trace = Trace()
    _current[:] = [trace]
    return trace


def _record(event: dict[str, Any]) -> None:
    trace = current()
    if trace is not None:
        trace._record(event)


def _entries(root: Any) -> int | None:
    """How many numbers a backward pass starts from: a tensor's, or a list or tuple of
    tensors' together (read as plain tensors). None for anything else, or what cannot be
    read; a generator is never consumed."""
    roots = root if _TYPE(root) in (list, tuple) else [root]
    try:
        if not all(isinstance(t, _BASE) for t in roots):
            return None
        with _PLAIN():
            return sum(int(_BASE.numel(t)) for t in roots)
    except Exception:  # noqa: BLE001 - an odd object says nothing; the pass goes on as usual
        return None


def install() -> None:
    """Wrap and hook torch once, before learner code exists."""
    real_backward = torch.Tensor.backward
    real_autograd_backward = torch.autograd.backward
    real_opt_zero = torch.optim.Optimizer.zero_grad
    real_mod_zero = torch.nn.Module.zero_grad
    # torch's optimizers whose step() calls its closure once, first, then reads .grad
    calls_closure_first = frozenset(
        getattr(torch.optim, name) for name in (
            "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam",
            "RMSprop", "Rprop"))

    depth = [0]  # Tensor.backward calls torch.autograd.backward: one call, one event

    def counted(root: Any, call: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0] == 0:
            _record({"event": "backward", "entries": _entries(root)})
        depth[0] += 1
        try:
            return call(*args, **kwargs)
        finally:
            depth[0] -= 1

    def backward(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        return counted(self, real_backward, self, *args, **kwargs)

    def autograd_backward(*args: Any, **kwargs: Any) -> Any:
        root = args[0] if args else kwargs.get("tensors")
        return counted(root, real_autograd_backward, *args, **kwargs)

    def opt_zero_grad(self: torch.optim.Optimizer, set_to_none: bool = True) -> None:
        _record({"event": "zero_grad", "by": "optimizer", "set_to_none": bool(set_to_none)})
        real_opt_zero(self, set_to_none=set_to_none)

    def mod_zero_grad(self: torch.nn.Module, set_to_none: bool = True) -> None:
        _record({"event": "zero_grad", "by": "module", "set_to_none": bool(set_to_none)})
        real_mod_zero(self, set_to_none=set_to_none)

    def after_step(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        trace = current()
        if trace is not None:
            params = [p for group in optimizer.param_groups for p in group["params"]]
            trace._record({"event": "step", "grads": trace.grads(params)})

    def record_update(optimizer: torch.optim.Optimizer) -> None:
        trace = current()
        if trace is not None:
            params = [p for group in optimizer.param_groups for p in group["params"]]
            trace._record({"event": "before_step", "grads": trace.grads(params)})

    class Recording:
        """The closure a step runs: the learner's closure (if any), then a record of the
        gradients, which step() reads right after its closure returns."""

        __slots__ = ("closure", "optimizer")

        def __init__(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
            self.optimizer, self.closure = optimizer, closure

        def __call__(self) -> Any:
            loss = self.closure() if self.closure is not None else None
            record_update(self.optimizer)
            return loss

    def before_step(optimizer: torch.optim.Optimizer, args: Any,
                    kwargs: Any) -> tuple[Any, Any] | None:
        if current() is None:
            return None
        closure = kwargs["closure"] if "closure" in kwargs else (
            args[1] if len(args) > 1 else None)
        if type(closure) is Recording:
            return None  # a step inside a step (a subclass calling super().step): one record
        if closure is None and type(optimizer) not in calls_closure_first:
            record_update(optimizer)  # an optimizer of the learner's own: .grad as it is now
            return None
        wrapped = Recording(optimizer, closure)
        if "closure" in kwargs:
            return args, {**kwargs, "closure": wrapped}
        return (args[0], wrapped, *args[2:]), kwargs  # args[0] is the optimizer itself

    def after_forward(module: torch.nn.Module, args: Any, output: Any) -> None:
        _record({"event": "forward", "module": type(module).__name__})

    real_clip = torch.nn.utils.clip_grad.clip_grad_norm_

    def clip_grad_norm_(*args: Any, **kwargs: Any) -> Any:
        total = real_clip(*args, **kwargs)
        trace = current()
        if trace is not None:
            trace._record({"event": "clip", "total": trace.values(total)})
        return total

    torch.Tensor.backward = backward  # type: ignore[method-assign]
    torch.autograd.backward = autograd_backward
    torch.optim.Optimizer.zero_grad = opt_zero_grad  # type: ignore[method-assign]
    torch.nn.Module.zero_grad = mod_zero_grad  # type: ignore[method-assign]
    register_optimizer_step_pre_hook(before_step)
    register_optimizer_step_post_hook(after_step)
    register_module_forward_hook(after_forward)
    # both names, so that `clip_grad_norm` (which calls the module's) is recorded too
    torch.nn.utils.clip_grad.clip_grad_norm_ = clip_grad_norm_
    torch.nn.utils.clip_grad_norm_ = clip_grad_norm_
