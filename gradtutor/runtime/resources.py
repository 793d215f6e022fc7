"""What a check holds of the machine's shared resources is its own (Linux): a cap on its
processes and threads and on its memory, and System V IPC objects that end with it.

The check's process calls `own_resources` just before learner code, while it still may:

- **processes and threads**: it makes a pids cgroup of its own (`gradtutor-<check folder>`),
  beneath the cgroup the tutor runs in, with `pids.max` = MAX_TASKS, and moves itself in, so a
  fork or thread bomb, or a loop that holds every free PID, fails with EAGAIN in its own check
  and leaves the machine's PIDs (and the grader's threads) alone. cgroup v2 where the tutor's
  cgroup has the pids controller enabled for its children, else the v1 pids hierarchy; either
  only where its folder is writable (root, or a delegated cgroup). Elsewhere RLIMIT_NPROC is
  lowered instead, which counts every process of the user, not only the check's (so it is set
  to what the user runs now plus MAX_TASKS), and does nothing for root;
- **memory**: likewise a memory cgroup of its own (the same cgroup on v2), capped at
  MEMORY_CAP, so memory that RLIMIT_AS does not count (a memfd or shared memory never mapped,
  the page cache of what it writes) is capped too: past the cap the kernel kills the check,
  and `release` tells the tutor it did. Only what the check allocates after it moves in is
  counted (torch, imported before, is not). Where no memory controller can be used, RLIMIT_AS
  alone caps it, and `grade` says so;
- **IPC**: it unshares its System V IPC (and POSIX message queue) namespace
  (`CLONE_NEWIPC`: root, or inside a user namespace of its own for an ordinary user), so
  whatever segment, semaphore or queue learner code makes is destroyed when the check's last
  process ends. Where neither can be made, the tutor removes, after the check, every shared
  memory segment of its user that nothing holds and whose maker was a process of the check
  (`release`).

The tutor calls `release` after the check's sweep: it kills what is left in the cgroup,
removes it and, where no IPC namespace was made, the check's segments. The walls
(sandbox.py, applied right after) keep learner code from writing the cgroup's files.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

PREFIXES = ("gradtutor-check-", "gradtutor-validate-")  # the folders whose checks join one
MAX_TASKS = 256  # processes and threads of one check: torch needs a handful
# The memory one check may hold beyond what it held when it moved in: the learner's 2 GiB
# (checking.check.MEMORY_BUDGET, the address space RLIMIT_AS adds) and 512 MiB for the
# checker's own work and the page cache of the files it writes.
MEMORY_CAP = 2 * 1024**3 + 512 * 1024**2
CGROUP_ROOT = Path("/sys/fs/cgroup")
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
LINUX = sys.platform.startswith("linux")


def cgroup_name(folder: str) -> str:
    """The name of the check's cgroup: its folder's (`gradtutor-check-<tutor pid>-...`)."""
    return os.path.basename(folder.rstrip("/"))


def cgroup_parents(controller: str, proc_cgroup: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """Where a check's cgroup with `controller` could be made, given this process's
    /proc/self/cgroup: its own v2 cgroup (when `controller` is in its subtree_control), then
    its v1 cgroup of that controller."""
    found: list[Path] = []
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and controllers == "":
            for mount in (root, root / "unified"):
                here = mount / path.lstrip("/")
                with contextlib.suppress(OSError):
                    if controller in (here / "cgroup.subtree_control").read_text().split():
                        found.insert(0, here)
                        break
        elif controller in controllers.split(","):
            found.append(root / controller / path.lstrip("/"))
    return found


def pids_parents(proc_cgroup: str, root: Path = CGROUP_ROOT) -> list[Path]:
    return cgroup_parents("pids", proc_cgroup, root)


def controller_parent(controller: str) -> Path | None:
    """The first cgroup beneath which this process may make a check's cgroup with
    `controller` (pids, memory)."""
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    return next((p for p in cgroup_parents(controller, text)
                 if os.access(p, os.W_OK | os.X_OK)), None)


def pids_parent() -> Path | None:
    return controller_parent("pids")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def join_pids_cgroup(folder: str, parent: Path | None) -> bool:
    """Make the check's pids cgroup beneath `parent` and move this process in (True)."""
    return join_cgroup(folder, parent, lambda group: {"pids.max": str(MAX_TASKS)})


def memory_limits(group: Path) -> dict[str, str]:
    """The files that cap a cgroup's memory at MEMORY_CAP, swap included: v2's, or v1's."""
    if (group / "memory.max").exists():
        swap = {"memory.swap.max": "0"} if (group / "memory.swap.max").exists() else {}
        return {"memory.max": str(MEMORY_CAP), **swap}
    return {"memory.limit_in_bytes": str(MEMORY_CAP)}


def join_memory_cgroup(folder: str, parent: Path | None) -> bool:
    """Make (or, on v2, reuse) the check's cgroup beneath `parent`, cap its memory and move
    this process in (True)."""
    return join_cgroup(folder, parent, memory_limits)


def join_cgroup(folder: str, parent: Path | None,
                limits: Callable[[Path], dict[str, str]]) -> bool:
    """Make the check's cgroup beneath `parent`, write its `limits` and move this process in
    (True)."""
    if parent is None:
        return False
    group = parent / cgroup_name(folder)
    for _ in range(3):  # another tutor's sweep may remove it while still empty
        try:
            group.mkdir(exist_ok=True)
            for name, value in limits(group).items():
                (group / name).write_text(value)
            (group / "cgroup.procs").write_text(str(os.getpid()))
            return True
        except FileNotFoundError:
            continue
        except OSError:
            break
    with contextlib.suppress(OSError):
        group.rmdir()
    return False


def limit_user_processes() -> None:
    """RLIMIT_NPROC at what this user runs now plus MAX_TASKS (it counts the user's every
    process and thread, not the check's; the kernel does not apply it to root)."""
    import resource

    uid = os.getuid()
    running = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    running += len(os.listdir(f"/proc/{entry.name}/task"))
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    value = running + MAX_TASKS
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (value, value))


def own_ipc_namespace() -> bool:
    """Unshare the System V IPC namespace (True when done): as root directly, else inside a
    new user namespace that maps this user to itself (possible only while single-threaded)."""
    libc = _libc()
    if libc.unshare(CLONE_NEWIPC) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        return False
    with contextlib.suppress(OSError):  # without the maps it runs as the overflow user
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    return True


def own_resources(folder: str) -> tuple[bool, bool, bool]:
    """In the check's process, before learner code: (a pids cgroup was joined, a memory
    cgroup was, an IPC namespace was made). Nothing on other systems."""
    if not LINUX:
        return False, False, False
    capped = join_pids_cgroup(folder, pids_parent())
    if not capped:
        with contextlib.suppress(OSError, ValueError):
            limit_user_processes()
    memory = join_memory_cgroup(folder, controller_parent("memory"))
    return capped, memory, own_ipc_namespace()


def release(folder: str, since: float) -> bool:
    """In the tutor, after the check's sweep: kill whatever is left in its cgroup and remove
    it; then remove the shared-memory segments the check left (`stale_segments`; `since`: the
    check's start, on the wall clock). True when the kernel killed a process of the check
    for passing MEMORY_CAP. The tutor decides from what it sees, never from anything the
    check's process said."""
    if not LINUX:
        return False
    killed = False
    for controller in ("pids", "memory"):  # on v2 one cgroup: removed the first time
        parent = controller_parent(controller)
        if parent is not None:
            killed = out_of_memory(parent / cgroup_name(folder)) or killed
            remove_cgroup(parent / cgroup_name(folder))
            sweep_cgroups(parent)
    remove_segments(since)
    return killed


def out_of_memory(group: Path) -> bool:
    """Whether the kernel killed a process of `group` for passing its memory cap (v2's
    memory.events, v1's memory.oom_control: `oom_kill N`)."""
    for name in ("memory.events", "memory.oom_control"):
        with contextlib.suppress(OSError, ValueError):
            for line in (group / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
    return False


def sweep_cgroups(parent: Path) -> None:
    """Remove the empty check cgroups beneath `parent`: those a killed tutor left. A cgroup
    with a process in it cannot be removed, so a running check's stays."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if entry.name.startswith(PREFIXES) and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def remove_cgroup(group: Path, rounds: int = 100) -> None:
    """Kill every process in `group` until none is left, then remove it."""
    for _ in range(rounds):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)  # a killed process leaves the cgroup as it exits; the sweep reaps it
    with contextlib.suppress(OSError):
        group.rmdir()


IPC_RMID = 0


def segments(table: str) -> list[dict[str, int]]:
    """The rows of /proc/sysvipc/shm as numbers by column name."""
    lines = table.splitlines()
    if not lines:
        return []
    names = lines[0].split()
    rows = []
    for line in lines[1:]:
        with contextlib.suppress(ValueError):
            rows.append(dict(zip(names, (int(v) for v in line.split()), strict=False)))
    return rows


def stale_segments(rows: list[dict[str, int]], uid: int, since: float) -> list[int]:
    """The ids of the segments of `uid` attached nowhere, made at or after `since` by a
    process that has ended: what a check's processes left."""
    return [row["shmid"] for row in rows
            if row.get("uid") == uid and row.get("nattch") == 0
            and row.get("ctime", 0) >= int(since) and not _alive(row.get("cpid", 0))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_segments(since: float) -> None:
    """Remove the shared-memory segments a check that started at `since` left
    (`stale_segments`). Where the check had its own IPC namespace, there are none."""
    try:
        table = Path("/proc/sysvipc/shm").read_text()
    except OSError:
        return
    libc = _libc()
    for shmid in stale_segments(segments(table), os.getuid(), since):
        libc.shmctl(shmid, IPC_RMID, None)
