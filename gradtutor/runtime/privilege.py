"""No capability for learner code, whatever the user the tutor or the grader runs as (Linux).

A grader often runs as root (CI containers, Docker images, lab machines), and a root worker
kept every capability inside the walls: it could reboot the machine, set its hostname, read
the kernel log, load BPF, take realtime priority, make device nodes and open them, move
network interfaces, `chattr +i` any file it could read, and read every process's
/proc/PID/environ (the teacher's tokens). `drop_all` is called in the worker just before
learner code, after everything that needs privilege (its cgroup, its network namespace, the
walls): the bounding set emptied (no execve can give a capability back, not even of a
set-uid-root program), the ambient set cleared, the permitted, effective and inheritable sets
zeroed, and the securebits locked so that uid 0 counts for nothing (SECBIT_NOROOT): the
process stays uid 0 for files, as the walls allow, but holds no power over the machine or
other processes. For an ordinary user it is already so and nothing changes.

Capabilities belong to a thread: the calling thread (the one that runs learner code) drops
them, and every thread or process it starts inherits that. Threads torch started before (its
thread pool, idle between kernels) keep theirs, but run no Python of the learner's.
Pure ctypes, no dependency (libcap's `capsh` is not on every machine).
"""

from __future__ import annotations

import ctypes
import sys

PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS (off), SECBIT_NO_CAP_AMBIENT_RAISE,
# each with its lock (include/uapi/linux/securebits.h)
SECUREBITS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 6) | (1 << 7)
_CAP_VERSION_3 = 0x20080522
_CAP_SETPCAP = 8
_LAST_CAP_FALLBACK = 63  # when /proc/sys/kernel/cap_last_cap cannot be read: every bit


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def effective() -> int | None:
    """This thread's effective capabilities (CapEff of /proc/thread-self/status), None where
    they cannot be read (not Linux)."""
    try:
        with open("/proc/thread-self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        return None
    return None


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as last:
            return int(last.read())
    except (OSError, ValueError):
        return _LAST_CAP_FALLBACK


def drop_all() -> bool:
    """Drop every capability of this thread and lock uid 0 out of regaining any (Linux);
    True when none is left (CapEff 0), False where they could not be read or dropped."""
    if not sys.platform.startswith("linux"):
        return False
    held = effective()
    if held is None:
        return False
    if held:
        libc = ctypes.CDLL(None, use_errno=True)
        if held & (1 << _CAP_SETPCAP):  # securebits and the bounding set need CAP_SETPCAP
            libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0)
            for cap in range(_last_cap() + 1):
                libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header = _CapHeader(_CAP_VERSION_3, 0)
        data = (_CapData * 2)()  # all zero: the three sets, both 32-bit halves
        libc.capset(ctypes.byref(header), data)
    return effective() == 0
