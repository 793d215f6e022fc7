"""A worker process made ready before learner code: torch imported quietly, what a check
will use imported and warmed up, and the limits lowered.
"""

from __future__ import annotations

import contextlib
import os
import sys

from gradtutor.checking.checkers import worker_checker


def hide_internal_warnings() -> None:
    """Keep warnings that PyTorch raises from its C++ core ("Triggered internally at
    /__w/pytorch/...") out of a check's output: they quote torch's own source lines, and the
    verdict already names the mistake behind them (reading .grad of a tensor that is no longer
    a leaf, say). The learner's own warnings still show."""
    import warnings

    warnings.filterwarnings("ignore", message=r"(?s).*Triggered internally at ")


def warm_up_training() -> None:
    """What a check's first training step costs in a fresh child (torch's first use of a
    module, an optimizer, a loss, a backward, and the pages of the server's memory they
    touch), paid by a waiting child before its request comes: a tiny model, the optimizers and
    losses the checkers use, `zero_grad`. The random state is as it was; nothing is traced (no
    case has started) and nothing of it is left."""
    import torch

    with contextlib.suppress(Exception), torch.random.fork_rng(devices=[]):
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.ReLU(),
                                    torch.nn.Linear(4, 2))
        inputs, targets = torch.randn(5, 3), torch.randn(5, 2)
        losses = (torch.nn.MSELoss(), torch.nn.SmoothL1Loss(), torch.nn.HuberLoss(),
                  torch.nn.L1Loss(), torch.nn.CrossEntropyLoss())
        for kind in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW):
            optimizer = kind(model.parameters(), lr=0.01)
            for loss_fn in losses:
                optimizer.zero_grad()
                loss_fn(model(inputs), targets.softmax(1)).backward()
                optimizer.step()
        torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9).step()
        [p.grad.tolist() for p in model.parameters() if p.grad is not None]


def _lower_limit(which: int, value: int) -> None:
    """Set soft and hard limit to `value` (or the existing hard limit, if lower). Lowering
    the hard limit cannot be undone by an unprivileged process, so learner code cannot lift it."""
    import resource

    _, hard = resource.getrlimit(which)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (value, value))


def limit_files(file_bytes: int) -> None:
    """No core dumps, and no file bigger than `file_bytes` (POSIX; elsewhere nothing)."""
    if os.name != "posix":
        return
    import resource
    import signal

    _lower_limit(resource.RLIMIT_CORE, 0)
    _lower_limit(resource.RLIMIT_FSIZE, file_bytes)
    # a write past the limit then fails with an OSError the learner sees, instead of a signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def mapped_bytes() -> int | None:
    """The address space this process has mapped now (Linux /proc), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def limit_memory(budget: int | None) -> None:
    """Allow `budget` bytes of address space beyond what is mapped now (torch included).

    Only where RLIMIT_AS works and what is mapped can be read: Linux. macOS ignores
    RLIMIT_AS for most allocations; Windows has no rlimits (a job object would do it)."""
    if budget is None or os.name != "posix" or sys.platform == "darwin":
        return
    import resource

    mapped = mapped_bytes()
    if mapped is not None:
        _lower_limit(resource.RLIMIT_AS, mapped + budget)


def import_torch_quietly() -> None:
    """Import torch and install the trace with every warning swallowed: a learner must never
    see torch's own import-time warnings (the NumPy one, deprecations) as if they were theirs.

    `showwarning` is replaced rather than the filters, so that the filters torch and NumPy
    install while importing stay in force for the learner's code afterwards."""
    import warnings

    shown = warnings.showwarning
    warnings.showwarning = lambda *args, **kwargs: None
    try:
        import torch

        from gradtutor.checking import trace

        torch.set_num_threads(1)
        # RuntimeError if inter-op work already ran: one thread is a preference, not a limit
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)
        trace.install()
    finally:
        warnings.showwarning = shown


def preload() -> None:
    """Import every checker and the snippet runner now. Imports only, no tensor work: a
    fork server may still fork safely afterwards, and no check pays for these imports."""
    from gradtutor.checking import snippet  # noqa: F401
    from gradtutor.checking.checkers import CHECKERS, declared  # noqa: F401
    from gradtutor.runtime import lifetime, resources, sandbox  # noqa: F401

    for name in CHECKERS:
        worker_checker(name)
    import importlib

    for module in PRELOADED:
        with contextlib.suppress(ImportError):  # a private module another torch may not have
            importlib.import_module(module)


# Imported lazily by torch the first time a check touches them. An optimizer's first step()
# imports torch._dynamo (step is wrapped to keep dynamo out), and with it sympy, mpmath and
# some 800 modules: seconds, in every forked child, unless the server has them already.
# torch.save and torch.load (the checkpoint family, the state_dict slides) import
# torch.utils.serialization. And the child's own set-up before learner code: its limits
# (resource, some 1.5 ms in a forked child) and the ASCII codec it reads /proc/self/statm with.
# tests/test_warm.py proves that a child setting itself up, the checks of every reference and
# mutant, and every snippet import no other module.
PRELOADED = ("torch._dynamo", "torch.profiler", "torch.profiler._cupti_monitor",
             "torch._subclasses.schema_check_mode", "torch.utils.serialization",
             "torch.utils.serialization.config", "resource", "encodings.ascii")


def confine_learner(folder: str) -> None:
    """From here on this process has a cap on its processes and IPC of its own
    (resources.py), may write only beneath the check's `folder` and signal only its own
    children (Landlock, sandbox.py; nothing where the kernel has none), reaches no network
    (netns.py, then Landlock's network rules), may make none of seccomp.py's calls, and holds
    no capability, whatever user it runs as (privilege.py: last, once nothing here needs
    one)."""
    if sys.platform.startswith("linux"):
        from gradtutor.runtime.netns import leave_network
        from gradtutor.runtime.privilege import drop_all
        from gradtutor.runtime.resources import own_resources
        from gradtutor.runtime.sandbox import confine

        own_resources(folder)
        leave_network()
        with contextlib.suppress(OSError):
            confine(folder, os.getcwd())
        drop_all()
