"""Nothing of a check outlives the tutor. A tutor ended by SIGTERM (a CI timeout) or SIGHUP (a
closed terminal) in the middle of a check first ends the check: no process and no folder is
left. One ended by SIGKILL cannot clean up: its worker dies with it (the parent-death signal),
and what the learner's code detached, and the folder, go at the next start's sweep, which never
touches what a live tutor owns."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from isolation_support import CORRECT, ROOT
from waits import PATIENCE_S, as_from_a_terminal

from gradtutor.runtime.lifetime import (
    GRADE_PREFIX,
    LOCK_NAME,
    LOCKS,
    STALE_AFTER,
    abandoned_folders,
    abandoned_processes,
    claim,
    folder_owner,
    lock_held,
    owned_prefix,
    owner_of,
    release,
)
from gradtutor.runtime.sandbox import WRITABLE_ENV
from gradtutor.runtime.slot import Slot

LINUX = sys.platform.startswith("linux")

# A check that never ends, with a detached grandchild (a session of its own): both write down
# their pids once they run.
LOOPS_WITH_A_DAEMON = """
import os
import time

NOTES = os.environ["GRADTUTOR_TEST_PIDDIR"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(os.path.join(NOTES, "daemon"), "w") as f:
            f.write(str(os.getpid()))
        while True:
            time.sleep(1)
    os._exit(0)
with open(os.path.join(NOTES, "worker"), "w") as f:
    f.write(str(os.getpid()))


def read_grad(w, loss_fn):
    while True:
        pass
"""


def test_a_folder_and_a_process_name_their_tutor() -> None:
    assert folder_owner(owned_prefix(4242) + "x1_y2") == 4242
    assert folder_owner("gradtutor-check-abc123") is None  # an older gradtutor's: unknown
    assert owner_of(b"python -m gradtutor.runtime.worker --serve 5 --tutor 77 ") == 77
    # a fork server of a gradtutor from before the runtime had its own package
    assert owner_of(b"python -m gradtutor.checking.worker --serve 5 --tutor 78 ") == 78
    assert owner_of(b"python -m gradtutor.runtime.worker /tmp/gradtutor-check-9-a/r.json") == 9
    assert owner_of(b"sleep 60\nHOME=/x\0GRADTUTOR_CHECK_MARK=/tmp/gradtutor-check-31-abc") == 31
    # a command that only mentions such a folder is not a check's process
    assert owner_of(b"ls /tmp/gradtutor-check-31-abc\nHOME=/x") is None


def test_only_what_a_gone_tutor_owned_is_swept(tmp_path: Path) -> None:
    for name in (owned_prefix(10) + "a", owned_prefix(11) + "b", "gradtutor-check-old",
                 "unrelated-10-x", owned_prefix(10, GRADE_PREFIX) + "c",
                 owned_prefix(11, GRADE_PREFIX) + "d"):
        (tmp_path / name).mkdir()
    gone = {10}.__contains__
    # a killed `gradtutor grade` leaves its run's folder too: it goes with its checks'
    # (by pid where there is no flock: Windows)
    assert sorted(abandoned_folders(str(tmp_path), lambda pid: not gone(pid),
                                    locks=False)) == [
        tmp_path / (owned_prefix(10) + "a"), tmp_path / (owned_prefix(10, GRADE_PREFIX) + "c")]
    listing = {1: b"sleep 1\nGRADTUTOR_CHECK_MARK=/tmp/gradtutor-check-10-a",
               2: b"python -m gradtutor.runtime.worker --serve 3 --tutor 10",
               3: b"python -m gradtutor.runtime.worker /tmp/gradtutor-check-11-b/request.json",
               4: b"ls /tmp/gradtutor-check-10-a",
               5: b"sleep 1\nGRADTUTOR_CHECK_MARK=/tmp/gradtutor-check-10-a"}
    assert abandoned_processes(listing, lambda pid: not gone(pid), spared={5}) == {1, 2}


def ended(pid: int) -> bool:
    """`pid` is gone or a zombie (reaped here if it is this process's to reap)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:][:1] == b"Z"


def wait_until(condition: Callable[[], object], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def tutor(args: list[str], tmp_path: Path,
          what: tuple[str, ...] = ("read-grad",)) -> subprocess.Popen[str]:
    """`gradtutor check WHAT ARGS` as a script would run it, with its own temporary folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path / "tmp"),
           "GRADTUTOR_HOME": str(tmp_path / "home"), "GRADTUTOR_TEST_PIDDIR": str(tmp_path),
           WRITABLE_ENV: str(tmp_path)}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "gradtutor", "check", *what, *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)


def left_folders(tmp_path: Path) -> list[str]:
    return [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("gradtutor-")]


def written_pid(path: Path) -> int:
    """The pid a hostile file wrote down; 0 until the whole line is there."""
    try:
        text = path.read_text()
    except OSError:
        return 0
    return int(text) if text.strip().isdigit() else 0  # written in one write(), at close


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="the parent-death signal and /proc are Linux's")
@pytest.mark.parametrize(("sig", "every"), [(signal.SIGTERM, False), (signal.SIGHUP, False),
                                            (signal.SIGKILL, False), (signal.SIGTERM, True)],
                         ids=["TERM", "HUP", "KILL", "TERM-check-all"])
def test_a_tutor_killed_mid_check_leaves_no_process_and_no_folder(
        sig: signal.Signals, every: bool, tmp_path: Path) -> None:
    """`every`: `check --all`, whose checks run on a job's thread as `grade`'s do, on the warm
    worker; the signal still ends the check running before the tutor ends by it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "read-grad.py").write_text(LOOPS_WITH_A_DAEMON)
    (tmp_path / "correct.py").write_text(CORRECT)
    first = (tutor(["--workspace", str(workspace), "--timeout", "600"], tmp_path,
                   what=("--all",)) if every else
             tutor([str(workspace / "read-grad.py"), "--timeout", "600"], tmp_path))
    try:  # a pid is written, then read: wait for the whole number, not the empty file
        assert wait_until(lambda: all(written_pid(tmp_path / name) for name in
                                      ("worker", "daemon")), 120)
    except BaseException:
        first.kill()
        first.communicate(timeout=30)
        raise
    pids = [written_pid(tmp_path / name) for name in ("worker", "daemon")]
    first.send_signal(sig)
    try:
        first.communicate(timeout=PATIENCE_S)
    except BaseException:
        first.kill()  # nothing of a failed run may load the tests after it
        first.communicate(timeout=PATIENCE_S)
        raise
    assert first.returncode == -sig  # it ends as the signal meant, cleanup first
    assert wait_until(lambda: ended(pids[0]), PATIENCE_S)  # the worker died with the tutor
    if sig == signal.SIGKILL:  # no chance to clean up: the next start sweeps
        assert len(left_folders(tmp_path)) == 1
        then = tutor([str(tmp_path / "correct.py")], tmp_path)
        assert then.communicate(timeout=120) and then.returncode == 0
    assert wait_until(lambda: all(ended(pid) for pid in pids), PATIENCE_S), pids
    assert left_folders(tmp_path) == []
    assert (workspace / "read-grad.py").read_text() == LOOPS_WITH_A_DAEMON  # checked in place


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_the_sweep_spares_a_live_tutor_s_check(tmp_path: Path) -> None:
    """Two tutors at once: the second one's start-up sweep leaves the first one's running
    check, and its folder, alone."""
    (tmp_path / "loops.py").write_text(LOOPS_WITH_A_DAEMON)
    (tmp_path / "correct.py").write_text(CORRECT)
    first = tutor([str(tmp_path / "loops.py"), "--timeout", "600"], tmp_path)
    try:
        assert wait_until(lambda: (tmp_path / "daemon").exists(), 120)
        daemon = int((tmp_path / "daemon").read_text())
        second = tutor([str(tmp_path / "correct.py")], tmp_path)
        assert second.communicate(timeout=120) and second.returncode == 0
        assert not ended(daemon) and len(left_folders(tmp_path)) == 1
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=PATIENCE_S)
    assert wait_until(lambda: ended(daemon), PATIENCE_S) and left_folders(tmp_path) == []


# ---- a folder is its tutor's while the tutor holds its lock, in any PID namespace ------------

def _hold(lock: Path) -> subprocess.Popen[str]:
    """Another process that holds `lock` (as a tutor in another PID namespace would) until
    its stdin closes; returned once it holds it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys\n"
         f"fd = os.open({str(lock)!r}, os.O_RDONLY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


@pytest.mark.skipif(not LOCKS, reason="no flock on this platform: the pid rule holds there")
def test_a_folder_is_kept_while_its_lock_is_held_whatever_its_pid_says(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    folder = tmp_path / (owned_prefix(int(dead.stdout)) + "a")  # its owner's pid: dead here
    folder.mkdir()
    holder = _hold(_claimed(folder))
    try:
        assert abandoned_folders(str(tmp_path), lambda pid: False) == []
    finally:
        holder.communicate("")  # it lets go, and ends
    assert abandoned_folders(str(tmp_path), lambda pid: True) == [folder]  # free: swept


def _claimed(folder: Path) -> Path:
    """`folder` as a tutor claims it, then let go (as when that tutor is killed)."""
    release(claim(folder))
    return folder / LOCK_NAME


@pytest.mark.skipif(not LOCKS, reason="no flock on this platform: the pid rule holds there")
def test_a_free_lock_or_an_old_unlocked_folder_is_swept(tmp_path: Path) -> None:
    freed, young, old = (tmp_path / (owned_prefix(os.getpid()) + name)
                         for name in ("freed", "young", "old"))
    for folder in (freed, young, old):
        folder.mkdir()
    _claimed(freed)  # its owner's pid (this one) is alive: the free lock decides
    hours_ago = time.time() - 2 * STALE_AFTER
    os.utime(old, (hours_ago, hours_ago))
    assert sorted(abandoned_folders(str(tmp_path), lambda pid: True)) == [freed, old]


@pytest.mark.skipif(not LOCKS, reason="no flock on this platform: the pid rule holds there")
def test_a_check_s_folder_is_held_until_it_is_removed() -> None:
    slot = Slot()
    try:
        assert lock_held(slot.base) is True
        assert slot.base not in abandoned_folders(str(slot.base.parent), lambda pid: False)
    finally:
        slot.close()
    assert not slot.base.exists()
