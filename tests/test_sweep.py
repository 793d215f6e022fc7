"""The sweep that finds a check's leftovers where there is no subreaper (macOS): every
process of the user's whose command line or environment carries the check's mark. It runs on
Linux too, with procps's `ps` in place of macOS's, so it is tested here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from waits import PATIENCE_S

from gradtutor.runtime.lifetime import PS_PROCPS, pids_with_marker, sweep_by_marker
from gradtutor.runtime.wire import CHECK_MARK

LISTING = (
    "   12   501 /usr/bin/python -m gradtutor.runtime.worker /tmp/gradtutor-check-ab/r.json\n"
    "   13   501 /usr/bin/python -m something-else HOME=/Users/x\n"
    "   14   501 sleep 60 HOME=/Users/x GRADTUTOR_CHECK_MARK=/tmp/gradtutor-check-ab\n"
    "   15     0 sleep 60 GRADTUTOR_CHECK_MARK=/tmp/gradtutor-check-ab\n"
    "   16   501 /usr/bin/python gradtutor check read-grad /tmp/gradtutor-check-ab\n"
    "   17   501 <defunct>\n"
    "garbage line\n")


def test_the_marked_processes_of_this_user_are_found_by_command_line_or_environment() -> None:
    # 14 exec'd `sleep`: only its environment still says which check it came from
    found = pids_with_marker(LISTING, "/tmp/gradtutor-check-ab", uid=501, spared={16})
    assert found == {12, 14}  # not 15 (another user's), nor 16 (the tutor, spared)


DETACH = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[2] + ".tmp", "w").write(str(os.getpid()))
        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
        if sys.argv[3] == "exec":
            os.execvp("sleep", ["sleep", "60"])
        time.sleep(60)
    os._exit(0)
"""


def detach(tmp_path: Path, marker: str, how: str, env: dict[str, str]) -> int:
    """Start a grandchild that left its session (and, with "exec", became `sleep`); its pid."""
    pidfile = tmp_path / f"pid-{how}"
    subprocess.run([sys.executable, "-c", DETACH, marker, str(pidfile), how], env=env,
                   timeout=30, check=True)
    deadline = time.monotonic() + PATIENCE_S
    while not pidfile.exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return int(pidfile.read_text())


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, awaiting its reaper
            return not stat.read().split(") ")[1].startswith("Z")
    except OSError:
        return False


def wait_until_gone(pid: int) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while running(pid):
        if time.monotonic() > deadline:
            pytest.fail(f"{pid} is still running")
        time.sleep(0.01)


LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="procps's ps and /proc")


@pytest.mark.slow
@LINUX_ONLY
def test_a_detached_setsid_grandchild_is_found_by_its_command_line(tmp_path: Path) -> None:
    marker = f"gradtutor-check-{uuid.uuid4().hex}"
    grandchild = detach(tmp_path, marker, "stay", dict(os.environ))
    assert sweep_by_marker(marker, PS_PROCPS) == {grandchild}
    wait_until_gone(grandchild)


@pytest.mark.slow
@LINUX_ONLY
def test_a_detached_grandchild_that_exec_d_sleep_is_found_by_its_environment(
    tmp_path: Path,
) -> None:
    marker = f"/tmp/gradtutor-check-{uuid.uuid4().hex}"
    env = {**os.environ, CHECK_MARK: marker}
    grandchild = detach(tmp_path, marker, "exec", env)
    deadline = time.monotonic() + PATIENCE_S
    while Path(f"/proc/{grandchild}/cmdline").read_bytes() != b"sleep\x0060\x00":
        assert time.monotonic() < deadline, "the grandchild did not exec sleep"
        time.sleep(0.01)
    # the command line says nothing of the check, so only the environment can find it
    assert sweep_by_marker(marker, ("ps", "-ww", "axo", "pid=,uid=,args=")) == set()
    assert running(grandchild)
    assert sweep_by_marker(marker, PS_PROCPS) == {grandchild}
    wait_until_gone(grandchild)


TUTOR = """
import os, sys
from gradtutor.runtime.lifetime import PS_PROCPS, sweep_by_marker
print(sorted(sweep_by_marker(sys.argv[1], PS_PROCPS)), os.getpid(), os.getppid())
"""


@pytest.mark.slow
@LINUX_ONLY
def test_the_sweep_never_kills_the_tutor_or_its_parent() -> None:
    # a tutor (and the shell that started it) whose own environment carries the mark, as if
    # run inside a check: the sweep spares both, and says so
    marker = f"/tmp/gradtutor-check-{uuid.uuid4().hex}"
    env = {**os.environ, CHECK_MARK: marker}
    shell = f"{sys.executable} -c '{TUTOR}' {marker}; echo shell survived"
    done = subprocess.run(["sh", "-c", shell], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.splitlines()[1:] == ["shell survived"]
    found, tutor, parent = done.stdout.split("] ")[0] + "]", *done.stdout.split()[1:3]
    assert found == "[]" and int(tutor) != int(parent)
