"""The doctor's probe: runs the learner's training script in this process, as `python SCRIPT
ARGS` would, and tells the parent what it does to gradients, as plain events on a private pipe.

    python -m gradtutor.doctor.probe FD STEPS SCRIPT [ARGS...]

It judges nothing (judge.py does, in the parent). torch is imported only when the script
imports it: a finder on sys.meta_path installs the observers the moment torch is loaded. They
are global hooks torch offers (optimizer step pre/post hooks, module forward hooks) and thin
wrappers of `torch.autograd.backward`, `Optimizer.zero_grad` and `Module.zero_grad`, and of
the calls that cut a graph (graphs.py's `watch_cuts`: `.detach()`, `.item()`...). After
STEPS optimizer steps (or STEPS backward passes, when the script has no optimizer) the probe
sends its last events and stops the script with an exception of its own, so that the script's
`with` and `finally` blocks still run. A fault of the probe's own never stops the script: it
is sent as an event and observing ends.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
import types
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gradtutor.doctor.closing import names_event, read_sources
from gradtutor.doctor.graphs import (
    DATA,
    discarded_count,
    divisor,
    graph_leaves,
    tensor_leaves,
    version,
    watch_cuts,
)
from gradtutor.doctor.running import TorchWatcher, error_line, events_fd, script_traceback
from gradtutor.doctor.sources import MAX_NAMES
from gradtutor.doctor.units import UnitWatch

MAX_EVENTS = 100_000  # a script that loops forever without stepping must not fill memory
FLUSHED = frozenset({"step", "end", "fault", "nograph"})
PENDING = 10_000  # forward graphs watched at most (the newest)
SAMPLE = 64  # entries of a parameter compared to see an update made through `.data`
CUT_CALLS = 3  # calls from one line that cuts a graph looked at (each walks the graph)


class StopScript(BaseException):
    """Raised into the script once enough has been seen; a BaseException, so that the
    script's `except Exception:` does not swallow it."""


class Leaf:
    """What the probe keeps of one tensor whose `.grad` a backward pass fills."""

    __slots__ = ("contrib", "norm", "pid", "sample", "tensor", "updated", "version")

    def __init__(self, pid: int, tensor: Any) -> None:
        self.pid = pid
        self.tensor = tensor
        self.contrib: list[int] = []  # the backward passes summed in .grad since it was clear
        self.updated = -1  # the event number of the last update of the tensor's values
        self.version = version(tensor)
        self.sample: Any = None
        self.norm: tuple[Any, int, float] | None = None  # (weakref to the grad, version, norm)


class Recorder:
    """Observes the script: keeps the leaves, modules and optimizers it meets, and writes one
    JSON event a line to `out`."""

    def __init__(self, out: Any, steps: int, script: str) -> None:
        self.out = out
        self.steps_wanted = steps
        self.script = os.path.realpath(script)
        self.folder = os.path.dirname(self.script)
        self.seq = 0
        self.pid = os.getpid()
        self.leaves: dict[int, Leaf] = {}
        self.modules: dict[int, tuple[int, Any]] = {}  # id -> (number, module)
        self.optimizers: dict[int, int] = {}
        self.ran: dict[int, Any] = {}  # modules run with grad on since the last backward
        self.units: UnitWatch | None = None  # for dead-units, once torch is loaded
        self.depth = 0
        self.busy = False
        self.steps = 0
        self.backwards = 0
        self.stopped = False
        self.broken = False
        self.torch: Any = None
        self.reads: tuple[type, ...] = ()
        # the graphs top-level forward passes built (node, module, line, the number of the
        # forward event that stands for the pass), until a backward pass (or torch.autograd.grad)
        # goes through one or the script lets go of it
        self.pending: list[tuple[Any, int, str | None, int]] = []
        self.graphed: list[int] = []  # forward events whose graphs autograd.grad went through
        self.forward_n = 0
        self.top_line: str | None = None
        self.discarded: int | None = None  # see discarded_count
        self.last_forward: tuple[int, bool, bool, str | None] | None = None
        self.last_backward = 0
        self._user_files: dict[str, bool] = {}
        self._shown: dict[str, str] = {}  # a file's name as the report shows it
        # per (line, how) of a cut: the calls looked at, the leaves already told
        self.cuts: dict[tuple[str, str], list[Any]] = {}

    # --- plumbing ---------------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> None:
        if os.getpid() != self.pid:  # a process the script forked: not the one observed
            return
        if self.seq >= MAX_EVENTS and event.get("e") not in ("end", "names"):
            return
        self.seq += 1
        event["n"] = self.seq
        self.out.write(json.dumps(event, separators=(",", ":"), allow_nan=True) + "\n")
        if event["e"] in FLUSHED:  # a step's events go out together, and the last ones
            self.out.flush()

    def guarded(self, job: Callable[..., Any], *args: Any) -> Any:
        """Runs an observing job; a fault of the probe's own ends observing, never the
        script."""
        if self.broken:
            return None
        try:
            return job(*args)
        except StopScript:
            raise
        except Exception as exc:  # noqa: BLE001 - the learner's script must go on
            self.broken = True
            self.emit({"e": "fault", "error": f"{type(exc).__name__}: {exc}",
                       "where": traceback.format_exc(limit=-3)})
            return None

    def user_file(self, filename: str) -> bool:
        known = self._user_files.get(filename)
        if known is None:
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            known = (path == self.script or (
                path.startswith(self.folder + os.sep) and "site-packages" not in path
                and "dist-packages" not in path and not path.startswith(_PACKAGE)))
            self._user_files[filename] = known
        return known

    def where(self) -> str | None:
        """file:line of the innermost frame in the learner's own files."""
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            if self.user_file(frame.f_code.co_filename):
                return f"{self.shown(frame.f_code.co_filename)}:{frame.f_lineno}"
            frame = frame.f_back
        return None

    def shown(self, name: str) -> str:
        """A file of the learner's as the report names it."""
        shown = self._shown.get(name)
        if shown is None:
            path = os.path.realpath(name)
            shown = self._shown[name] = (
                os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path)
        return shown

    def leaf(self, tensor: Any) -> Leaf:
        found = self.leaves.get(id(tensor))
        if found is None or found.tensor is not tensor:
            found = Leaf(len(self.leaves), tensor)
            self.leaves[id(tensor)] = found
            self.emit({"e": "leaf", "pid": found.pid, "shape": list(tensor.shape),
                       "param": isinstance(tensor, self.torch.nn.Parameter),
                       "requires_grad": bool(tensor.requires_grad)})
        return found

    def norms(self, leaves: Sequence[Leaf], again: bool = False) -> list[float | None]:
        """The 2-norm of each leaf's gradient (None for none, or one that cannot be measured:
        sparse). A gradient unchanged since it was measured (the same tensor, at the same
        version) is not measured again, unless `again`: writes through `.data` and a
        GradScaler's unscaling leave the version as it was."""
        torch = self.torch
        grads = [leaf.tensor.grad for leaf in leaves]
        found: list[float | None] = [None] * len(leaves)
        todo = []
        for at, (leaf, g) in enumerate(zip(leaves, grads, strict=True)):
            if g is None or g.is_sparse:
                continue
            known = leaf.norm
            if not again and known is not None and known[0]() is g and known[1] == version(g):
                found[at] = known[2]
            else:
                todo.append(at)
        if todo:
            with torch.no_grad():
                values = torch.stack([n.to("cpu", torch.float32) for n in torch._foreach_norm(
                    [grads[at].detach() for at in todo])]).tolist()
            for at, value in zip(todo, values, strict=True):
                g = grads[at]
                leaves[at].norm = (weakref.ref(g), version(g), float(value))
                found[at] = float(value)
        return found

    def updated(self, leaf: Leaf, free: bool) -> str | None:
        """Whether the tensor was updated since last seen: 'moved' when its version counter
        moved or, for a tensor no optimizer holds (`free`), a sample of its entries changed
        (an update through `.data` leaves the counter alone); 'still' when a free tensor was
        written but its sample is as it was (an update by a zero gradient); else None."""
        tensor = leaf.tensor
        written = version(tensor) != leaf.version
        if not free or leaf.sample is None:
            return "moved" if written else None
        if not self.torch.equal(self._sample(tensor), leaf.sample):
            return "moved"
        return "still" if written else None

    def _sample(self, tensor: Any) -> Any:
        flat = tensor.detach().reshape(-1)
        step = max(1, flat.numel() // SAMPLE)
        return flat[::step][:SAMPLE].clone()

    # --- the observers ----------------------------------------------------------------------

    def install(self, torch: Any) -> None:
        """Hooks torch once it is loaded."""
        self.torch = torch
        from torch.nn.modules import module as module_hooks
        from torch.optim import optimizer as optim_hooks

        self.emit({"e": "torch", "version": torch.__version__})
        self.discarded = discarded_count(torch)
        optim_hooks.register_optimizer_step_pre_hook(
            lambda opt, args, kwargs: self.guarded(self.before_step, opt, args, kwargs))
        optim_hooks.register_optimizer_step_post_hook(
            lambda opt, args, kwargs: self.after_step_and_maybe_stop(opt))
        module_hooks.register_module_forward_pre_hook(
            lambda module, args: self.guarded(self.before_forward, module))
        def after(module: Any, args: Any, output: Any) -> None:
            self.guarded(self.after_forward, module, output)

        try:  # always_call: the depth stays right when a forward pass raises
            module_hooks.register_module_forward_hook(after, always_call=True)
        except TypeError:  # a torch without it
            module_hooks.register_module_forward_hook(after)
        self.wrap(torch.autograd, "backward", self.observed_backward)
        self.wrap(torch.autograd, "grad", self.observed_grad)
        # a parametrization computes a weight when it is read: not a forward pass of the script
        self.reads = (torch.nn.utils.parametrize.ParametrizationList,)
        self.wrap(optim_hooks.Optimizer, "zero_grad", self.observed_optimizer_clear)
        self.wrap(optim_hooks.Optimizer, "__init__", self.observed_optimizer_made)
        self.wrap(torch.nn.Module, "zero_grad", self.observed_module_clear)
        watch_cuts(torch, lambda how, tensors, frame: self.guarded(self.cut, how, tensors, frame))

    @staticmethod
    def wrap(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]
             ) -> None:
        original = getattr(owner, name)
        wrapped = make(original)
        wrapped.__wrapped__ = original  # type: ignore[attr-defined]
        wrapped.__name__ = original.__name__
        wrapped.__doc__ = original.__doc__
        setattr(owner, name, wrapped)

    def observed_backward(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def backward(*args: Any, **kwargs: Any) -> Any:
            if self.busy or self.broken or self.stopped:  # a backward inside a backward
                if self.stopped:
                    raise StopScript
                return original(*args, **kwargs)
            tensors = args[0] if args else kwargs.get("tensors")
            self.busy = True
            try:
                before = self.guarded(self.before_backward, tensors, kwargs.get("inputs"))
                try:
                    result = original(*args, **kwargs)
                except RuntimeError as exc:
                    if before is not None and not before[0] and "does not require grad" in str(
                            exc):
                        self.emit({"e": "nograph", "line": before[2]})
                    raise
                if before is not None and before[0]:
                    self.guarded(self.after_backward, *before)
                return result
            finally:
                self.busy = False
        return backward

    def observed_grad(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def grad(*args: Any, **kwargs: Any) -> Any:
            if not (self.busy or self.broken or self.stopped):
                self.guarded(self.graph_used, args[0] if args else kwargs.get("outputs"))
            return original(*args, **kwargs)
        return grad

    def graph_used(self, outputs: Any) -> None:
        """torch.autograd.grad goes through the graphs of `outputs` (a gradient penalty): the
        forward passes that built them are used, as by a backward pass; the next one says so."""
        torch = self.torch
        roots = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or ())
        _, nodes = graph_leaves(torch, [t.grad_fn for t in roots if isinstance(t, torch.Tensor)])
        self.graphed += self.used_graphs(nodes)

    def used_graphs(self, nodes: set[int]) -> list[int]:
        """The forward events whose pending graphs have a node in `nodes`, no longer pending."""
        used = [entry[3] for entry in self.pending if id(entry[0]) in nodes]
        self.pending = [entry for entry in self.pending if id(entry[0]) not in nodes]
        return used

    def observed_optimizer_clear(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def zero_grad(opt: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(opt, *args, **kwargs)
            set_to_none = kwargs.get("set_to_none", args[0] if args else True)
            self.guarded(self.cleared, "optimizer", self.optimizer_id(opt),
                         [p for group in opt.param_groups for p in group["params"]],
                         set_to_none)
            return result
        return zero_grad

    def observed_optimizer_made(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def __init__(opt: Any, *args: Any, **kwargs: Any) -> None:
            original(opt, *args, **kwargs)
            self.guarded(self.optimizer_id, opt)
        return __init__

    def observed_module_clear(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def zero_grad(module: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(module, *args, **kwargs)
            set_to_none = kwargs.get("set_to_none", args[0] if args else True)
            self.guarded(self.cleared, "module", self.module_id(module),
                         list(module.parameters()), set_to_none)
            return result
        return zero_grad

    def optimizer_id(self, opt: Any) -> int:
        oid = self.optimizers.get(id(opt))
        if oid is None:
            oid = self.optimizers[id(opt)] = len(self.optimizers)
            pids = [self.leaf(p).pid for group in opt.param_groups for p in group["params"]]
            self.emit({"e": "optimizer", "opt": oid, "cls": type(opt).__name__,
                       "line": self.where(), "pids": pids})
        return oid

    def module_id(self, module: Any) -> int:
        known = self.modules.get(id(module))
        if known is None:  # the probe keeps the module: its id stays its own
            mid = len(self.modules)
            self.modules[id(module)] = (mid, module)
            nn = self.torch.nn.modules  # the layers that behave otherwise in eval mode
            modal = nn.dropout._DropoutNd, nn.batchnorm._NormBase
            self.emit({"e": "module", "mod": mid, "cls": type(module).__name__,
                       "modal": any(isinstance(m, modal) for m in module.modules()),
                       "direct": [self.leaf(p).pid for p in module.parameters(recurse=False)],
                       "tree": [self.leaf(p).pid for p in module.parameters()]})
            return mid
        return int(known[0])

    def cleared(self, how: str, owner: int, params: Iterable[Any], set_to_none: bool) -> None:
        pids = []
        for p in params:
            leaf = self.leaf(p)
            leaf.contrib = []
            pids.append(leaf.pid)
        self.emit({"e": "clear", "how": how, "owner": owner, "pids": pids,
                   "set_to_none": bool(set_to_none), "line": self.where()})

    def before_forward(self, module: Any) -> None:
        torch = self.torch
        top = self.depth == 0
        self.depth += 1
        grad_on = torch.is_grad_enabled()
        mid = self.module_id(module)
        if grad_on:
            self.ran[mid] = module
        if top and not isinstance(module, self.reads):
            self.top_line = self.where()
            key = (mid, bool(module.training), grad_on, self.top_line)
            if key != self.last_forward:  # a run of like forward passes is told once
                self.last_forward = key
                self.emit({"e": "forward", "mod": mid, "training": key[1], "grad": grad_on,
                           "line": self.top_line, **({} if grad_on else {
                               "inference": torch.is_inference_mode_enabled()})})
                self.forward_n = self.seq

    def after_forward(self, module: Any, output: Any) -> None:
        self.depth = max(0, self.depth - 1)
        fn = getattr(output, "grad_fn", None)
        if self.depth == 0 and fn is not None and not isinstance(module, self.reads):
            # to tell later whether a backward used it
            self.drop_discarded()
            self.pending.append((fn, self.module_id(module), self.top_line, self.forward_n))
            del self.pending[:-PENDING]

    def drop_discarded(self) -> None:
        """Tells of the forward graphs the script has let go of without a backward pass
        through them. Holding a graph node's Python object does not hold the graph: while the
        graph lives, its node holds the object too, so an object that only the probe holds
        (two references: its entry's, and the argument of getrefcount) is a graph gone."""
        if self.discarded is None:
            return
        for entry in [e for e in self.pending if sys.getrefcount(e[0]) <= self.discarded]:
            self.pending.remove(entry)
            self.emit({"e": "unused", "mod": entry[1], "line": entry[2]})

    def cut(self, how: str, tensors: list[Any], frame: types.FrameType) -> None:
        """A call of the script's own (`frame`'s) took the values of `tensors` without their
        graph (`graphs.watch_cuts`): which leaves lost their path through it, told once per
        line, from its first few calls."""
        if self.busy or self.stopped or not self.user_file(frame.f_code.co_filename) or (
                how == DATA and not self.depth):  # a parameter's .data in a forward pass
            return
        line = f"{self.shown(frame.f_code.co_filename)}:{frame.f_lineno}"
        seen = self.cuts.setdefault((line, how), [0, set()])
        if seen[0] >= CUT_CALLS:
            return
        seen[0] += 1
        pids = {self.leaf(t).pid for t in tensor_leaves(self.torch, tensors)} - seen[1]
        if pids:
            seen[1] |= pids
            self.emit({"e": "cut", "how": how, "line": line, "reached": sorted(pids)})

    def before_backward(self, tensors: Any, inputs: Any) -> tuple[bool, list[Any], str | None,
                                                                   dict[str, Any]] | None:
        torch = self.torch
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
        if not self.optimizers and self.backwards >= self.steps_wanted:
            self.finish("steps")
        line = self.where()
        fns = [t.grad_fn for t in roots if isinstance(t, torch.Tensor)]
        targets, nodes = graph_leaves(torch, fns)
        # a leaf itself (`torch.tensor(value, requires_grad=True).backward()`) is its target
        targets += [t for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is None
                    and t.requires_grad]
        if inputs is not None:
            targets = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        if not targets:  # backward() will say the loss has no graph
            return False, [], line, {}
        leaves = [self.leaf(t) for t in targets]
        grads = [leaf.tensor.grad for leaf in leaves]
        norms = self.norms(leaves, again=True)
        free = not self.optimizers
        pre: dict[str, str] = {}
        moved, still = [], []
        for leaf, grad, norm in zip(leaves, grads, norms, strict=True):
            change = self.updated(leaf, free)
            if change == "moved":
                leaf.updated = self.seq + 1  # after every backward seen so far
                moved.append(leaf.pid)
            elif change == "still":
                still.append(leaf.pid)
            if grad is None or norm == 0.0:
                leaf.contrib = []
                pre[str(leaf.pid)] = "none" if grad is None else "zero"
            else:
                pre[str(leaf.pid)] = "stale" if any(
                    c < leaf.updated for c in leaf.contrib) else "kept"
        ran = sorted(self.ran)
        self.ran = {}
        used = sorted({entry[1] for entry in self.pending if id(entry[0]) in nodes})
        graphed = sorted({*self.used_graphs(nodes), *self.graphed})
        self.graphed = []
        self.drop_discarded()
        root = roots[0] if roots else None
        loss = (float(root.detach()) if isinstance(root, torch.Tensor) and root.numel() == 1
                else None)
        facts = {"line": line, "pre": pre, "moved": moved, "still": still, "ran": ran,
                 "used": used, "graphs": graphed,
                 "loss": loss,
                 "div": divisor(fns[0]) if len(fns) == 1 else None}
        return True, leaves, line, facts

    def after_backward(self, _ok: bool, leaves: list[Any], _line: str | None,
                       facts: dict[str, Any]) -> None:
        self.backwards += 1
        self.last_backward = self.seq + 1
        norms = self.norms(leaves)
        free = not self.optimizers
        for leaf in leaves:
            leaf.contrib.append(self.seq + 1)  # this backward's event number
            leaf.version = version(leaf.tensor)
            if free:
                leaf.sample = self._sample(leaf.tensor)
        self.emit({"e": "backward", "i": self.backwards, **facts,
                   "reached": [leaf.pid for leaf in leaves],
                   "norm": {str(leaf.pid): n for leaf, n in zip(leaves, norms, strict=True)}})

    def before_step(self, opt: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
        oid = self.optimizer_id(opt)
        # `args` starts with the optimizer itself: step(self, closure=None)
        closure = (len(args) > 1 and args[1] is not None) or kwargs.get("closure") is not None
        leaves = [self.leaf(p) for group in opt.param_groups for p in group["params"]]
        grads = [leaf.tensor.grad for leaf in leaves]
        norms = self.norms(leaves, again=True)  # a GradScaler unscales in place, unseen
        watch = self.units = self.units or UnitWatch(self.torch)
        alive_of = watch.count(self.steps + 1, [leaf.pid for leaf in leaves], grads)
        states = {}
        for leaf, grad, norm in zip(leaves, grads, norms, strict=True):
            if grad is None or norm == 0.0:
                state = "none" if grad is None else "zero"
            else:
                state = "stale" if any(c < leaf.updated for c in leaf.contrib) else "fresh"
            units = alive_of.get(leaf.pid)
            states[str(leaf.pid)] = [state, norm, list(leaf.contrib) if state not in (
                "none", "zero") else [], *(units if units else ())]
        self.emit({"e": "step", "i": self.steps + 1, "opt": oid, "cls": type(opt).__name__,
                   "closure": closure, "line": self.where(), "g": states,
                   "window": watch.window})

    def after_step_and_maybe_stop(self, opt: Any) -> None:
        if self.stopped:
            raise StopScript
        self.guarded(self.after_step, opt)
        if self.steps >= self.steps_wanted:
            self.finish("steps")

    def after_step(self, opt: Any) -> None:
        self.steps += 1
        if self.steps == 1:
            self.guarded(self.send_names)
        for group in opt.param_groups:
            for p in group["params"]:
                leaf = self.leaf(p)
                now = version(p)
                if now != leaf.version:
                    leaf.updated = self.seq + 1  # after every backward seen so far
                leaf.version = now

    # --- the end ------------------------------------------------------------------------------

    def send_names(self, extra: dict[str, Any] | None = None) -> None:
        if self.torch is not None:
            self.emit(names_event(self, sys._getframe(1), extra))

    def read_sources(self) -> None:
        found, calls = read_sources(self)
        if found:
            self.emit({"e": "evals", "at": found[:5]})
        self.emit({"e": "calls", "names": sorted(calls)[:MAX_NAMES]})

    def finish(self, reason: str, **details: Any) -> None:
        """Sends the last events; with reason 'steps', stops the script."""
        if self.stopped:
            raise StopScript
        self.stopped = True
        self.guarded(self.send_names, details.pop("globals", None))
        self.guarded(self.read_sources)
        self.emit({"e": "end", "reason": reason, "steps": self.steps,
                   "backwards": self.backwards, **details})
        if reason == "steps":
            raise StopScript


_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def main(argv: list[str]) -> int:
    channel, steps, script, *args = argv
    out = os.fdopen(events_fd(channel), "w", encoding="utf-8")
    recorder = Recorder(out, int(steps), script)
    # as `python SCRIPT ARGS` would have them
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    if "torch" in sys.modules:  # imported already (a sitecustomize, a test's fork server)
        recorder.guarded(recorder.install, sys.modules["torch"])
    else:
        sys.meta_path.insert(0, TorchWatcher(
            lambda torch: recorder.guarded(recorder.install, torch)))
    code = 0
    try:
        globals_after = runpy.run_path(script, run_name="__main__")
        recorder.finish("finished", globals=globals_after)
    except StopScript:
        pass
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not recorder.stopped:
            recorder.finish("exit", code=code)
    except KeyboardInterrupt:
        if not recorder.stopped:
            recorder.finish("interrupted")
        code = 130
    except BaseException as exc:  # noqa: BLE001 - the script's own error, shown as Python would
        sys.stderr.write(script_traceback(exc, recorder.script))
        if not recorder.stopped:
            recorder.finish("error", error=f"{type(exc).__name__}: {exc}"[:500],
                            line=error_line(exc, recorder.user_file))
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        out.close()
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
