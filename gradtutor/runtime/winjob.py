"""Windows: hold a check's worker and everything it starts in a Job Object.

What a process group and the Linux subreaper do elsewhere, a job does on Windows: every
process the worker starts joins the job and cannot leave it (breakaway is not allowed), so
closing the job's last handle kills them all, a detached grandchild included
(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE). The job also caps the memory its processes commit,
the counterpart of RLIMIT_AS, and turns an unhandled crash into an exit code instead of an
error-report dialog that would wait for a click nobody makes.

Only `ctypes` is used, and only inside functions, so the module imports anywhere; the
structure layout is checked on every platform by the tests.
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from typing import Any

JOB_OBJECT_LIMIT_JOB_MEMORY = 0x00000200
JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x00000400
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
KILLED_EXIT_CODE = 1  # what TerminateJobObject gives every process in the job


class BasicLimits(ctypes.Structure):
    """JOBOBJECT_BASIC_LIMIT_INFORMATION."""

    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),  # ULONG_PTR
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class IoCounters(ctypes.Structure):
    """IO_COUNTERS."""

    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class ExtendedLimits(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION (144 bytes on 64-bit Windows)."""

    _fields_ = [
        ("BasicLimitInformation", BasicLimits),
        ("IoInfo", IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def limit_flags(memory: bool) -> int:
    """The job's limit flags: always kill-on-close and no crash dialog; a memory cap if asked."""
    flags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
    return flags | (JOB_OBJECT_LIMIT_JOB_MEMORY if memory else 0)


@dataclass
class Job:
    """A Job Object handle. `close` (or `kill`) ends every process in it."""

    handle: int

    def limits(self) -> ExtendedLimits:
        info = ExtendedLimits()
        _check(_kernel32().QueryInformationJobObject(
            ctypes.c_void_p(self.handle), JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.byref(info), ctypes.sizeof(info), None), "QueryInformationJobObject")
        return info

    def set_limits(self, memory_bytes: int | None) -> None:
        info = ExtendedLimits()
        info.BasicLimitInformation.LimitFlags = limit_flags(memory_bytes is not None)
        info.JobMemoryLimit = memory_bytes or 0
        _check(_kernel32().SetInformationJobObject(
            ctypes.c_void_p(self.handle), JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.byref(info), ctypes.sizeof(info)), "SetInformationJobObject")

    def cap_memory_above_now(self, budget: int) -> None:
        """Let the job commit `budget` bytes beyond its peak so far (torch already loaded)."""
        self.set_limits(self.limits().PeakJobMemoryUsed + budget)

    def add(self, process_handle: int) -> None:
        _check(_kernel32().AssignProcessToJobObject(
            ctypes.c_void_p(self.handle), ctypes.c_void_p(process_handle)),
            "AssignProcessToJobObject")

    def kill(self) -> None:
        _kernel32().TerminateJobObject(ctypes.c_void_p(self.handle), KILLED_EXIT_CODE)

    def close(self) -> None:
        if self.handle:
            self.kill()
            _kernel32().CloseHandle(ctypes.c_void_p(self.handle))
            self.handle = 0


def contain(process_handle: int) -> Job | None:
    """Put a just-started process in a new kill-on-close job; None if Windows refuses (for
    example inside a job that forbids nested jobs on an old Windows): the tree kill by
    taskkill still applies then."""
    kernel32 = _kernel32()
    handle = kernel32.CreateJobObjectW(None, None)
    if not handle:
        return None
    job = Job(int(handle))
    try:
        job.set_limits(None)
        job.add(process_handle)
    except OSError:
        kernel32.CloseHandle(ctypes.c_void_p(job.handle))
        return None
    return job


def _kernel32() -> Any:  # pragma: no cover - Windows
    if sys.platform != "win32":
        raise OSError("Job Objects exist only on Windows")
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    return kernel32


def _check(ok: int, what: str) -> None:  # pragma: no cover - Windows
    if not ok:
        code = 0
        if sys.platform == "win32":
            code = ctypes.get_last_error()
        raise OSError(code, f"{what} failed (Windows error {code})")
