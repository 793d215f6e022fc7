"""A terminal that hangs up: the tutor saves its place and ends, with no traceback, whether
SIGHUP reaches it or was ignored by whoever started it (`nohup`, `trap '' HUP`)."""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX terminal"),
              pytest.mark.slow]
pexpect = pytest.importorskip("pexpect")

from terminal_support import (  # noqa: E402 - after the skip
    FIXTURES,
    SAVED,
    SCREEN_S,
    Tutor,
    _quote,
    child_env,
    saved,
    walk_to,
)
from waits import PATIENCE_S  # noqa: E402

from gradtutor.checking.exercise_rules import EXERCISE_RULES  # noqa: E402
from gradtutor.lessons.course import load_course  # noqa: E402


def test_sighup_saves_the_place_and_quits_calmly(tmp_path: Path) -> None:
    basics = load_course(FIXTURES, rules=EXERCISE_RULES).find("basics")
    tutor = Tutor(["start", "basics", "--lessons", str(FIXTURES)], tmp_path)
    walk_to(tutor, basics, 0, 2)
    tutor.child.kill(signal.SIGHUP)
    tutor.expect_re(SAVED, "the place is saved")
    assert tutor.end() in (0, 130)
    assert "Traceback" not in tutor.text
    assert saved(tmp_path)["lessons"]["basics"]["step"] == basics.steps[2].id


def test_a_hang_up_with_sighup_ignored_still_ends_the_tutor(tmp_path: Path) -> None:
    basics = load_course(FIXTURES, rules=EXERCISE_RULES).find("basics")
    errors = tmp_path / "stderr.txt"
    command = " ".join(map(_quote, [sys.executable, "-m", "gradtutor", "start", "basics",
                                    "--lessons", str(FIXTURES)]))
    tutor = Tutor.__new__(Tutor)  # the same driver, its process started with HUP ignored
    tutor.log, tutor.first = io.StringIO(), True
    tutor.child = pexpect.spawn("/bin/sh", ["-c", f"trap '' HUP; exec {command} 2>{errors}"],
                                env=child_env(tmp_path), dimensions=(40, 100),
                                encoding="utf-8", timeout=SCREEN_S)
    tutor.child.logfile_read = tutor.log
    walk_to(tutor, basics, 0, 1)
    pid = tutor.child.pid
    os.close(tutor.child.child_fd)  # the terminal goes away; SIGHUP is ignored
    deadline = time.monotonic() + PATIENCE_S
    status = None
    while time.monotonic() < deadline:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the tutor went on running after its terminal hung up")
    assert os.WIFEXITED(status), status
    said = errors.read_text()
    assert "Traceback" not in said and "internal error" not in said
    assert said.count("\n") <= 1
    assert saved(tmp_path)["lessons"]["basics"]["step"] == basics.steps[1].id
