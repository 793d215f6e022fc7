"""Nothing of a check outlives the tutor: what a check leaves running is swept after it, and
whatever a killed tutor left behind is swept at the next start.

`owned_prefix` (every check folder names the tutor that owns it), `claim` (and holds it by a
lock), `sweep_abandoned` (check folders no live tutor holds, and marked processes whose tutor
is gone), and `Workers`, the checks' workers running
now, which the sweep after each check spares and `stop` ends. How a process dies with the
tutor is signals.py's; what the tutor reads of processes, procfs.py's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from gradtutor.runtime.procfs import alive, descendants, process_table
from gradtutor.runtime.signals import LINUX, become_subreaper, guard_memory, kill_group
from gradtutor.runtime.wire import CHECK_MARK

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FOLDER_PREFIX = "gradtutor-check-"
# A check's folder is FOLDER_PREFIX + the owning tutor's pid + "-" + random letters. A check's
# process names it in its mark (environment) or, a cold worker, on its command line; a fork
# server (and the children it forks) says `--tutor PID` on its command line.
_FOLDER_OWNER = re.compile(r"gradtutor-(?:check|grade)-(\d+)-[^-]*\Z")
# `gradtutor grade` keeps its students' private copies in GRADE_PREFIX + pid + "-" + letters.
GRADE_PREFIX = "gradtutor-grade-"
_OWNER = re.compile(rb"GRADTUTOR_CHECK_MARK=[^\0\n]*?gradtutor-check-(\d+)-"
                    rb"|gradtutor\.(?:runtime|checking)\.worker [^\0\n]*?gradtutor-check-(\d+)-"
                    rb"|gradtutor\.(?:runtime|checking)\.worker --serve \d+ --tutor (\d+)")


def owned_prefix(pid: int | None = None, kind: str = FOLDER_PREFIX) -> str:
    """The prefix of a check folder (or, with GRADE_PREFIX, a grading run's folder) owned by
    the tutor `pid` (this process by default)."""
    return f"{kind}{os.getpid() if pid is None else pid}-"


# ---- the worker's side ---------------------------------------------------------------------


# ---- the tutor's side: terminating signals -------------------------------------------------


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


# ---- a folder held by its tutor ------------------------------------------------------------
# A check's folder (and a grading run's) belongs to a live tutor while that tutor holds an
# flock on the lock file inside it: the kernel lets go of it when the tutor ends, however it
# ends, and the lock is seen the same from every PID namespace that shares the folder (a pid
# is not: a tutor in a container sharing /tmp is "not alive" outside it). Windows has no
# flock: there a folder's tutor is alive while its pid is.

LOCK_NAME = "owner.lock"
# A folder with no lock file (one being made, an older gradtutor's, or a check whose learner
# code deleted it) is left alone until it is this old, in seconds: longer than any check.
STALE_AFTER = 3600.0
LOCKS = fcntl is not None


def claim(folder: Path) -> int | None:
    """Hold `folder` for this process until `release`: a lock file in it, locked before it has
    its name (made under a name of its own, locked, then renamed), so that a sweep never finds
    it unlocked while this process lives. The fd (None without flock: Windows)."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    making = folder / f".{LOCK_NAME}.{os.getpid()}"
    fd = os.open(making, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(making, folder / LOCK_NAME)
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(held: int | None) -> None:
    """Let go of a folder `claim` held (after removing it)."""
    if held is not None:
        with contextlib.suppress(OSError):
            os.close(held)


def lock_held(folder: Path) -> bool | None:
    """Whether a live process holds `folder`'s lock; None if it has no lock file (or there is
    no flock). A lock file that cannot be opened counts as held: nothing is removed unsure."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def abandoned(folder: Path, owner: int, is_alive: Callable[[int], bool], now: float,
              locks: bool) -> bool:
    """Whether the tutor-owned `folder` (its name says `owner`) has no live tutor: its lock is
    free, or it has no lock file and is older than STALE_AFTER. Without flock (`locks`
    False): its owner's pid is not alive here."""
    if not locks:
        return not is_alive(owner)
    held = lock_held(folder)
    if held is not None:
        return not held
    try:
        return now - folder.lstat().st_mtime > STALE_AFTER
    except OSError:
        return False


def abandoned_folders(temp: str, is_alive: Callable[[int], bool] = alive, *,
                      now: float | None = None, locks: bool = LOCKS) -> list[Path]:
    """The check folders (and grading runs' folders) in `temp` that no live tutor holds
    (`abandoned`); never one of another program, nor an older gradtutor's unnamed ones."""
    found = []
    moment = time.time() if now is None else now
    with contextlib.suppress(OSError):
        for entry in os.scandir(temp):
            if (entry.name.startswith((FOLDER_PREFIX, GRADE_PREFIX))
                    and entry.is_dir(follow_symlinks=False)):
                owner = folder_owner(entry.name)
                path = Path(entry.path)
                if owner is not None and abandoned(path, owner, is_alive, moment, locks):
                    found.append(path)
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
    with contextlib.suppress(OSError):
        remove_tree(folder)
    shutil.rmtree(folder, ignore_errors=True)


# ---- the tutor's side: the processes below it ----------------------------------------------
# Nothing is left running: on Linux the tutor becomes a child subreaper, so even a learner's
# double-forked, `setsid` daemon re-parents to it and is found and killed after the check
# (`Workers.sweep`). On macOS the worker's group is killed, then every process of the user's
# whose command line or environment carries the check's mark (CHECK_MARK, inherited through
# fork and exec). On Windows the worker runs in a Job Object (winjob.py) that takes
# everything it starts down with it.

class Workers:
    """The worker processes of the checks running now, each with how to end it: the sweep
    after one check spares the others' workers (and what runs below them), so checks may run
    in several threads at once, and `stop` ends them (the tutor is closing). Whoever runs
    checks owns one and hands it to every engine that may run checks at the same time in
    this process (the engines sweep the same process tree)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, Callable[[], None]] = {}
        self._stopped: set[int] = set()  # ended by `stop`; `forget` tells

    def start(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        """Start a worker (or fork server) with `start` and register it as live, with no sweep
        in between; the tutor becomes a subreaper first (Linux)."""
        become_subreaper()
        sweep_abandoned()  # once: what a killed tutor left, before this one starts its own
        guard_memory()
        with self._lock:
            proc = start()
            self._live[proc.pid] = functools.partial(kill_group, proc.pid)
        return proc

    def register(self, pid: int, kill: Callable[[], None] | None = None) -> None:
        """Spare `pid` and what runs below it from every sweep until `forget`; `kill`
        (default: SIGKILL its process group) is how `stop` ends it."""
        with self._lock:
            self._live[pid] = kill or functools.partial(kill_group, pid)

    def forget(self, pid: int) -> bool:
        """`pid` has ended: stop sparing it. Whether `stop` had ended it."""
        with self._lock:
            self._live.pop(pid, None)
            stopped = pid in self._stopped
            self._stopped.discard(pid)
        return stopped

    def stop(self, pids: Iterable[int] | None = None) -> None:
        """End the workers running now (all of them, or those of `pids`): the tutor is
        closing. Each such check ends as stopped, not as a crash of the learner's code."""
        with self._lock:  # held while killing: a worker forgotten meanwhile has its job closed
            for pid in list(self._live) if pids is None else pids:
                kill = self._live.get(pid)
                if kill is not None:
                    self._stopped.add(pid)
                    kill()

    def sweep(self, before: set[int], marker: str, *, group: int | None = None,
              rounds: int = 400) -> None:
        """Kill and reap whatever a check left running: the worker's process `group`, then (on
        Linux) every process below the tutor that did not exist `before` the check and is not
        another check's worker, round after round until none is left. Elsewhere on POSIX,
        where orphans go to init, they are found by `marker` (the check's folder) in their
        command line or environment, which keeps it through fork and exec. On Windows the
        worker's job (or `taskkill /T`) took them when the worker was killed."""
        if sys.platform == "win32":  # pragma: no cover
            return
        if group is not None:
            kill_group(group)
        if not LINUX:  # pragma: no cover - macOS; the same sweep is tested on Linux
            for _ in range(3):
                if not sweep_by_marker(marker):
                    return
                time.sleep(0.01)
            return
        me = os.getpid()
        for _ in range(rounds):
            with self._lock:
                table = process_table()
                doomed = descendants(table, me, before | self._live.keys())
                for pid in doomed:
                    if table[pid][1] != "Z":
                        _signal(pid, signal.SIGKILL)
                for pid in doomed:
                    if table[pid][0] == me:  # only our own children can be reaped by us
                        _reap(pid)
            if not doomed:
                return
            time.sleep(0.005)


# `ps` listing every process as "pid uid command line", the command line followed by the
# environment the process started with: macOS's -E, procps's `e`. A process that exec'd
# another program keeps the check's mark in its environment, not in its command line.
PS_MACOS = ("ps", "-ww", "-E", "-axo", "pid=,uid=,args=")
PS_PROCPS = ("ps", "-ww", "axeo", "pid=,uid=,args=")


def pids_with_marker(listing: str, marker: str, *, uid: int, spared: Iterable[int]) -> set[int]:
    """From a `PS_MACOS` or `PS_PROCPS` listing, the processes of the user `uid` whose command
    line or environment holds `marker`, but for `spared` ones."""
    spare = set(spared)
    found: set[int] = set()
    for line in listing.splitlines():
        fields = line.split(None, 2)
        if len(fields) < 3 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        pid, owner, args = int(fields[0]), int(fields[1]), fields[2]
        if owner == uid and marker in args and pid not in spare:
            found.add(pid)
    return found


def sweep_by_marker(marker: str, ps: tuple[str, ...] = PS_MACOS) -> set[int]:
    """SIGKILL every process of this user whose command line or environment (as listed by
    `ps`) holds `marker`, never the tutor itself or its parent; the pids it found."""
    env = {k: v for k, v in os.environ.items() if k != CHECK_MARK}  # ps must not list itself
    try:
        listing = subprocess.run(list(ps), capture_output=True, text=True, env=env,
                                 errors="replace", timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    doomed = pids_with_marker(listing, marker, uid=os.getuid(),
                              spared={os.getpid(), os.getppid()})
    for pid in doomed:
        _signal(pid, signal.SIGKILL)
    return doomed


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def remove_tree(path: Path) -> None:
    """Delete `path` and everything in it, whatever the learner did to the permissions inside
    (a folder made unreadable or read-only is opened up first; symlinks are never followed)."""
    def unlock(folder: str) -> None:
        try:
            os.chmod(folder, stat.S_IRWXU)
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                unlock(entry.path)
            elif entry.is_file(follow_symlinks=False):  # Windows won't delete read-only files
                with contextlib.suppress(OSError):
                    os.chmod(entry.path, stat.S_IRUSR | stat.S_IWUSR)

    if not path.exists():
        return
    unlock(str(path))
    shutil.rmtree(path, ignore_errors=True)
