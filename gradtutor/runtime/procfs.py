"""What the tutor reads of processes: /proc on Linux (parents, states, sessions, the
tutor's descendants), and whether a pid is alive elsewhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

from gradtutor.runtime.signals import LINUX


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


def process_table() -> dict[int, tuple[int, str]]:
    """The processes below the tutor on Linux, the tutor included: pid -> (parent pid, state
    letter). Read by walking each process's children (/proc/<pid>/task/<tid>/children, every
    thread's, since any thread may fork), which costs a few reads per process of the tutor's
    own; where the kernel does not list children, every process of the system instead (some
    4 ms a scan with 70 processes here, and a desktop runs hundreds; this runs twice a check)."""
    me = os.getpid()
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):
        return _every_process()
    table: dict[int, tuple[int, str]] = {}
    todo = [me]
    while todo:
        pid = todo.pop()
        entry = process_stat(pid)
        if entry is None:
            continue  # it ended while we looked
        table[pid] = entry
        todo += [child for child in children_of(pid) if child not in table]
    return table


def own_children_in_session(session: int) -> list[int]:
    """The children of this process (Linux) that belong to `session`, zombies included: a
    session keeps its members' session id after its leader died, and a child's pid cannot
    name another process until this process reaps it."""
    return [child for child in children_of(os.getpid())
            if len(fields := _stat_fields(child)) >= 4 and int(fields[3]) == session]


def children_of(pid: int) -> list[int]:
    """The children of `pid` now, whichever of its threads forked them (Linux /proc; empty
    if it is gone or the kernel does not list children)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        found += [int(child) for child in
                  (_read(f"/proc/{pid}/task/{thread}/children") or b"").split()]
    return found


def _every_process() -> dict[int, tuple[int, str]]:
    """Every process on this Linux system: pid -> (parent pid, state letter)."""
    table: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (entry := process_stat(int(name))) is not None:
            table[int(name)] = entry
    return table


def process_stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, from /proc/<pid>/stat; None if it is gone."""
    fields = _stat_fields(pid)
    return (int(fields[1]), fields[0].decode("ascii", "replace")) if len(fields) >= 2 else None


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name (state, parent, group, session,
    ...); empty if the process is gone."""
    line = _read(f"/proc/{pid}/stat")
    return line[line.rfind(b")") + 2:].split() if line else []  # the name may hold spaces


def _read(path: str) -> bytes | None:
    """A small /proc file's bytes (os.open and os.read: a third of the cost of open())."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def descendants(table: Mapping[int, tuple[int, str]], root: int,
                spared: Iterable[int] = ()) -> set[int]:
    """The pids below `root` in `table`, not counting `spared` pids and what is below them."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    skip = set(spared)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in skip and child not in found and child != root:
                found.add(child)
                todo.append(child)
    return found


def tutor_descendants() -> set[int]:
    return descendants(process_table(), os.getpid()) if LINUX else set()


def is_running(pid: int) -> bool:
    """Whether `pid` names a process that has not ended (a zombie has)."""
    stat = process_stat(pid)
    return stat is not None and stat[1] != "Z"


def parent_of(pid: int) -> int | None:
    """The parent of `pid`, or None if it is gone."""
    stat = process_stat(pid)
    return stat[0] if stat is not None else None
