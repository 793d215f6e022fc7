"""What the doctor's probe tells once observing ends, read from the learner's process: the names
the script gives its modules and parameters (and which are frozen), and what its source says:
where it switches a model to evaluation (which a run stopped early may not have reached) and
the names it calls.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from gradtutor.doctor.evaluation import evaluation_lines
from gradtutor.doctor.sources import called_names

MAX_SOURCES = 20  # files of the learner's read for where they evaluate


def names_event(recorder: Any, frame: types.FrameType | None,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `names` event: the names the script gives the modules and parameters the probe
    knows, read from the variables of its frames from `frame` out (and `extra`, its globals
    once it has ended)."""
    spaces: list[dict[str, Any]] = []
    while frame is not None:
        if recorder.user_file(frame.f_code.co_filename):
            spaces += [frame.f_locals, frame.f_globals]
        frame = frame.f_back
    if extra is not None:
        spaces.append(extra)
    module_type, tensor_type = recorder.torch.nn.Module, recorder.torch.Tensor
    names: dict[str, str] = {}
    modules: dict[str, str] = {}
    for space in spaces:
        for var, value in list(space.items()):
            if var.startswith("__"):
                continue
            if isinstance(value, module_type):
                for name, sub in value.named_modules(prefix=var):
                    known = recorder.modules.get(id(sub))
                    if known is not None and known[1] is sub:
                        modules.setdefault(str(known[0]), name)
                for name, p in value.named_parameters(prefix=var):
                    leaf = recorder.leaves.get(id(p))
                    if leaf is not None and leaf.tensor is p:
                        names.setdefault(str(leaf.pid), name)
            elif isinstance(value, tensor_type):
                leaf = recorder.leaves.get(id(value))
                if leaf is not None and leaf.tensor is value:
                    names.setdefault(str(leaf.pid), var)
    frozen = [leaf.pid for leaf in recorder.leaves.values() if not leaf.tensor.requires_grad]
    return {"e": "names", "params": names, "modules": modules, "frozen": frozen}


def read_sources(recorder: Any) -> tuple[list[str], set[str]]:
    """Where the script and its own modules switch a model to evaluation (a run stopped early
    may not have got there), as file:line, and the names they call (a layer not called in the
    run may be called elsewhere), read from their source."""
    files = [recorder.script,
             *(getattr(m, "__file__", None) for m in list(sys.modules.values()))]
    found: list[str] = []
    calls: set[str] = set()
    for path in [f for f in dict.fromkeys(files) if isinstance(f, str)
                 and f.endswith(".py") and recorder.user_file(f)][:MAX_SOURCES]:
        try:
            with open(path, encoding="utf-8") as file:
                source = file.read(1 << 20)
        except (OSError, ValueError):
            continue
        found += [f"{recorder.shown(path)}:{n}" for n in evaluation_lines(source)]
        calls |= called_names(source)
    return found, calls
