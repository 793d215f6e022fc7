"""The Job Object holding a check's processes: its layout everywhere, its effect on Windows."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
import time

import pytest

from gradtutor.runtime import winjob

WINDOWS = pytest.mark.skipif(sys.platform != "win32", reason="Job Objects are Windows-only")


def test_structure_matches_the_windows_sdk_layout() -> None:
    # sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION): 144 on 64-bit Windows, 112 on 32-bit;
    # a wrong layout makes SetInformationJobObject fail or set the wrong limits
    expected = 144 if ctypes.sizeof(ctypes.c_void_p) == 8 else 112
    assert ctypes.sizeof(winjob.ExtendedLimits) == expected
    assert winjob.ExtendedLimits.JobMemoryLimit.offset == expected - 3 * ctypes.sizeof(
        ctypes.c_size_t)


def test_every_job_kills_on_close_and_never_shows_a_crash_dialog() -> None:
    for memory in (False, True):
        flags = winjob.limit_flags(memory)
        assert flags & winjob.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        assert flags & winjob.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
        assert bool(flags & winjob.JOB_OBJECT_LIMIT_JOB_MEMORY) is memory


@pytest.mark.skipif(sys.platform == "win32", reason="checks the refusal off Windows")
def test_off_windows_containing_fails_with_an_os_error() -> None:
    with pytest.raises(OSError, match="only on Windows"):
        winjob.contain(0)


def _alive(pid: int) -> bool:
    listing = subprocess.run(["tasklist", "/FI", f"PID eq {pid}", "/NH"],
                             capture_output=True, text=True, check=False).stdout
    return str(pid) in listing


@WINDOWS
@pytest.mark.slow
def test_closing_the_job_kills_a_detached_grandchild() -> None:  # pragma: no cover
    parent = textwrap.dedent("""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 creationflags=0x00000008 | 0x00000200)  # DETACHED, NEW GROUP
        print(child.pid, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    job = winjob.contain(int(proc._handle))  # type: ignore[attr-defined]
    assert job is not None
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    proc.wait(timeout=30)
    assert _alive(grandchild)  # the parent exited; the detached grandchild outlived it
    job.close()
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild)


@WINDOWS
@pytest.mark.slow
def test_the_memory_cap_stops_a_flood() -> None:  # pragma: no cover
    flood = textwrap.dedent("""
        import time
        time.sleep(1)
        try:
            block = bytearray(3 * 1024**3)
        except MemoryError:
            print("MemoryError", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", flood], stdout=subprocess.PIPE, text=True)
    job = winjob.contain(int(proc._handle))  # type: ignore[attr-defined]
    assert job is not None
    job.cap_memory_above_now(512 * 1024**2)
    out, _ = proc.communicate(timeout=60)
    job.close()
    assert "MemoryError" in out or proc.returncode != 0
