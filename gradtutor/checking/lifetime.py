"""Nothing of a check outlives the tutor: its worker dies with it, a terminating signal cleans
up before the tutor ends, and whatever a killed tutor left behind is swept at the next start.

The worker's side: `die_with` (Linux's parent-death signal). The tutor's side:
`cleanup_before_termination` (SIGTERM and SIGHUP end a check the way Ctrl+C does, then the
tutor ends by that signal), `owned_prefix` (every check folder names the tutor that owns it)
and `sweep_abandoned` (check folders and marked processes whose tutor is gone).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
FOLDER_PREFIX = "gradtutor-check-"
# A check's folder is FOLDER_PREFIX + the owning tutor's pid + "-" + random letters. A check's
# process names it in its mark (environment) or, a cold worker, on its command line; a fork
# server (and the children it forks) says `--tutor PID` on its command line.
_FOLDER_OWNER = re.compile(r"gradtutor-(?:check|grade)-(\d+)-[^-]*\Z")
# `gradtutor grade` keeps its students' private copies in GRADE_PREFIX + pid + "-" + letters.
GRADE_PREFIX = "gradtutor-grade-"
_OWNER = re.compile(rb"GRADTUTOR_CHECK_MARK=[^\0\n]*?gradtutor-check-(\d+)-"
                    rb"|gradtutor\.checking\.worker [^\0\n]*?gradtutor-check-(\d+)-"
                    rb"|gradtutor\.checking\.worker --serve \d+ --tutor (\d+)")


def owned_prefix(pid: int | None = None, kind: str = FOLDER_PREFIX) -> str:
    """The prefix of a check folder (or, with GRADE_PREFIX, a grading run's folder) owned by
    the tutor `pid` (this process by default)."""
    return f"{kind}{os.getpid() if pid is None else pid}-"


# ---- the worker's side ---------------------------------------------------------------------

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


# ---- the tutor's side: terminating signals -------------------------------------------------

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


# ---- the tutor's side: what a killed tutor left ----------------------------------------------

def owner_of(text: bytes) -> int | None:
    """The pid of the tutor that owns a check process, from its command line and environment
    (a mark, a cold worker's request path, a fork server's `--tutor`); None for any other."""
    found = _OWNER.search(text)
    if found is None:
        return None
    return int(next(group for group in found.groups() if group))


def folder_owner(name: str) -> int | None:
    """The pid of the tutor that owns the check folder called `name`; None for any other."""
    found = _FOLDER_OWNER.fullmatch(name)
    return int(found.group(1)) if found else None


def alive(pid: int) -> bool:
    """Whether a process `pid` exists (a live one, or one that cannot be asked: kept)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - Windows
        return _alive_windows(pid)
    try:
        os.kill(pid, 0)  # signal 0 only asks
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive_windows(pid: int) -> bool:  # pragma: no cover - Windows
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    handle = kernel32.OpenProcess(0x00100000 | 0x1000, False, pid)  # SYNCHRONIZE | QUERY_LIMITED
    if not handle:
        return bool(ctypes.get_last_error() == 5)  # type: ignore[attr-defined,unused-ignore]
    try:
        return bool(kernel32.WaitForSingleObject(handle, 0) == 0x102)  # WAIT_TIMEOUT: running
    finally:
        kernel32.CloseHandle(handle)


def abandoned_folders(temp: str, is_alive: Callable[[int], bool] = alive) -> list[Path]:
    """The check folders (and grading runs' folders) in `temp` whose tutor is gone (never one
    a live tutor owns)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(temp):
            if (entry.name.startswith((FOLDER_PREFIX, GRADE_PREFIX))
                    and entry.is_dir(follow_symlinks=False)):
                owner = folder_owner(entry.name)
                if owner is not None and not is_alive(owner):
                    found.append(Path(entry.path))
    return found


def abandoned_processes(listing: dict[int, bytes], is_alive: Callable[[int], bool] = alive,
                        spared: set[int] | None = None) -> set[int]:
    """From `listing` (pid -> its command line and environment), the processes that belong to
    a check whose tutor is gone."""
    spare = spared if spared is not None else {os.getpid(), os.getppid()}
    doomed = set()
    for pid, text in listing.items():
        owner = owner_of(text)
        if pid not in spare and owner is not None and owner not in spare and not is_alive(owner):
            doomed.add(pid)
    return doomed


def own_processes() -> dict[int, bytes]:
    """This user's processes: pid -> command line and environment (Linux /proc; elsewhere on
    POSIX `ps`, whose listing holds both; nothing on Windows, where the job took them)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        return {}
    if not LINUX:  # pragma: no cover - macOS: the same listing the check's sweep reads
        return _ps_listing()
    uid = os.getuid()
    listing: dict[int, bytes] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                text = cmdline.read(65536).replace(b"\0", b" ")
            with open(f"/proc/{name}/environ", "rb") as environ:
                text += b"\n" + environ.read(1 << 20)
        except OSError:
            continue  # it ended while we looked, or is not ours to read
        listing[int(name)] = text
    return listing


def _ps_listing() -> dict[int, bytes]:  # pragma: no cover - macOS
    import subprocess

    from gradtutor.checking.runner import PS_MACOS

    try:
        out = subprocess.run(list(PS_MACOS), capture_output=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    uid = str(os.getuid()).encode()
    listing = {}
    for line in out.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[0].isdigit() and fields[1] == uid:
            listing[int(fields[0])] = fields[2]
    return listing


@functools.cache
def sweep_abandoned() -> None:
    """Once per tutor, before its first worker starts: kill the processes of checks whose
    tutor was killed (SIGKILL leaves no chance to clean up), then remove their folders."""
    for pid in abandoned_processes(own_processes()):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for folder in abandoned_folders(tempfile.gettempdir()):
        _remove(folder)


def _remove(folder: Path) -> None:
    from gradtutor.checking.runner import remove_tree

    with contextlib.suppress(OSError):
        remove_tree(folder)
    shutil.rmtree(folder, ignore_errors=True)
