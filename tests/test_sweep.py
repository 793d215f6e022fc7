"""The command-line sweep that finds a check's forked leftovers where there is no subreaper
(macOS). It runs on Linux too, so it is tested here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from gradtutor.checking.runner import pids_with_marker, sweep_by_marker


def test_pids_with_marker_reads_ps_output():
    listing = ("  12 /usr/bin/python -m gradtutor.checking.worker /tmp/gradtutor-check-ab/r.json\n"
               "  13 /usr/bin/python -m something-else\n"
               "  14 /usr/bin/python -m gradtutor.checking.worker /tmp/gradtutor-check-ab/r.json\n")
    assert pids_with_marker(listing, "/tmp/gradtutor-check-ab", me=14) == {12}


DETACH = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[2], "w").write(str(os.getpid()))
        time.sleep(60)
    os._exit(0)
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX fork and setsid")
def test_a_detached_setsid_grandchild_is_found_by_its_command_line(tmp_path):
    marker = f"gradtutor-check-{uuid.uuid4().hex}"
    pidfile = tmp_path / "pid"
    subprocess.run([sys.executable, "-c", DETACH, marker, str(pidfile)], timeout=30, check=True)
    deadline = time.monotonic() + 10
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    grandchild = int(pidfile.read_text())
    assert sweep_by_marker(marker) == {grandchild}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{grandchild}/stat") as stat:  # a zombie is dead, awaiting init
            if stat.read().split(") ")[1].startswith("Z"):
                break
        time.sleep(0.01)
    else:
        pytest.fail("the grandchild is still running")
