"""How processes end with the tutor: the parent-death signal and the subreaper (Linux
prctl), `fork_child` (the runtime's one fork: a child that dies with its parent), not being
dumpable, the group kill, and the tutor's own SIGTERM/SIGHUP turned into a clean-up.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any

from gradtutor.checking.protocol import WorkerExit

LINUX = sys.platform.startswith("linux")


PR_SET_PDEATHSIG = 1


PR_SET_DUMPABLE = 4


def die_with(parent: int) -> None:
    """Linux: this process is SIGKILLed when `parent` (the one that started it) ends. If it has
    ended already, before the signal was asked for, end now. Elsewhere nothing: Windows has
    the job (kill-on-close), macOS the sweep at the next start.

    Learner code could undo it (prctl is not forbidden); the next start's sweep still finds
    what it left."""
    if not LINUX:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was set: nobody will send it
        os._exit(0)


def not_dumpable() -> None:
    """Linux: make this process's memory unreadable to other processes of the user (the
    tutor and the reference process hold reference results): not dumpable, so
    /proc/<pid>/mem, ptrace and process_vm_readv need CAP_SYS_PTRACE. A learner's process
    could otherwise read the expected answers out of it. Harmless if it fails."""
    if not LINUX:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


guard_memory = functools.cache(not_dumpable)  # the tutor: once per process


class Terminated(BaseException):
    """The tutor received SIGTERM or SIGHUP during a check (a BaseException, like Ctrl+C's
    KeyboardInterrupt, so that no `except Exception` stops it on its way out)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


@contextlib.contextmanager
def cleanup_before_termination() -> Iterator[None]:
    """While a check runs: SIGTERM (a CI timeout, `kill`) and SIGHUP (a closed terminal), where
    nobody else handles them, unwind the check like Ctrl+C does, so its worker, whatever that
    started and its folder are gone; then the tutor ends by that same signal, as it would have.
    Only in the main thread (the only one that can receive Python signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken: dict[int, signal.Handlers | Callable[[int, FrameType | None], object] | int | None] = {}

    def terminate(signum: int, frame: FrameType | None) -> None:
        for sig in taken:
            signal.signal(sig, signal.SIG_IGN)  # a second one must not cut the cleanup short
        raise Terminated(signum)

    for sig in _TERMINATING:
        if signal.getsignal(sig) is signal.SIG_DFL:
            taken[sig] = signal.signal(sig, terminate)
    try:
        yield
    except Terminated as exc:
        signal.signal(exc.signum, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)  # ends the tutor as the signal meant to
        raise  # pragma: no cover - only where the signal did not end it
    finally:
        for sig, previous in taken.items():
            signal.signal(sig, previous)


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (POSIX); quietly, if it is gone already."""
    if os.name != "posix":  # pragma: no cover - Windows has no process groups to signal
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@functools.cache
def become_subreaper() -> None:
    """Linux: orphans of the tutor's descendants re-parent to the tutor instead of init,
    so a learner's detached process stays findable. Once per process; harmless if it fails."""
    if not LINUX:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def fork_child(body: Callable[[], int | None], *, close: Sequence[Any] = ()) -> int:
    """Fork a child that dies with this process (its parent-death signal: a fork server ends
    with the tutor, so its child with it), closes this process's sockets `close`, and runs
    `body`; it ends with `os._exit` whatever happens: with the code `body` returns (OK for
    None), SOFTWARE when it raises (there is nowhere to report it; the exit code says it).
    The one place the runtime forks. The child's pid (OSError if it cannot be forked)."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = int(WorkerExit.SOFTWARE)
        try:
            die_with(parent)
            for each in close:
                each.close()
            returned = body()
            code = int(WorkerExit.OK) if returned is None else returned
        finally:
            os._exit(code)
    return pid
