"""The warm worker: a check in a fresh child of a worker that imported torch already gets the
same verdict as a cold check, leaks nothing into the next check, survives its server being
killed (from outside, or by the learner's own code), ends hostile files as cleanly as a cold
check with nothing left running, and leaves no process once closed.

One fork server (`warm`) serves most tests of this module; it costs one torch import. The
pre-started (spawned) worker that macOS and Windows use is tested here too, on Linux.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from checker_batch import checks_from, run_in_batch
from hostile_cases import FORK, HOSTILE_FILES, run_by
from isolation_support import (
    CONFINED,
    CORRECT,
    HOSTILE,
    LOOPS,
    SIGNALLING,
    TAMPERING,
    FakeJobs,
    Guarded,
    exercise,
    live,
    loops_noting,
    own_descendants,
    process_parents,
    processes_named,
    refused_everything,
    wait_for,
)
from waits import HANG_S, PATIENCE_S

from gradtutor.checking.check import MEMORY_BUDGET
from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.fork import FORK_SERVER, ForkEngine
from gradtutor.runtime.run import run_check
from gradtutor.runtime.sandbox import SWITCH_ENV, WRITABLE_ENV, landlock_abi
from gradtutor.runtime.signals import become_subreaper
from gradtutor.runtime.spawn import SERVER_TUNING
from gradtutor.runtime.warm import WarmWorker, warm_enabled
from gradtutor.runtime.wire import TUNED_MARK

if TYPE_CHECKING:
    from conftest import Cli

LINUX = sys.platform.startswith("linux")
POSIX = os.name == "posix"
TIMEOUT = 1.0

pytestmark = pytest.mark.skipif(not POSIX, reason="the warm worker's tests use POSIX signals")

LEAKS = """
import builtins
import sys
import torch

builtins.LEFT_BEHIND = "by the previous check"
sys.modules["gradtutor.checking.trace"].current = lambda: None  # blind the trace
torch.Tensor.backward = lambda self, *args, **kwargs: None
torch.ones = None


def read_grad(w, loss_fn):
    return None
"""
FINDS_NO_LEAK = """
import builtins
import torch

assert not hasattr(builtins, "LEFT_BEHIND"), "a previous check's global is still here"
assert torch.ones is not None


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
"""
KILLS_SERVER = """
import json
import os
import signal


def read_grad(w, loss_fn):
    os.kill(os.getppid(), signal.SIGKILL)  # in a warm check, the parent is the fork server
    return None
"""

KILLS_SERVER_ONCE = """
import os
import signal


def read_grad(w, loss_fn):
    with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "killed"), "a") as f:
        f.write(f"{os.getppid()}\\n")  # every run of this code, and the parent it kills
    os.kill(os.getppid(), signal.SIGKILL)
    return None
"""

TELLS_PARENT = """
import os

with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "parent"), "w") as f:
    f.write(str(os.getppid()))


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
"""

LISTS_FDS = """
import json
import os

FDS = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        FDS[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass  # the fd os.listdir itself had open
with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "fds.json"), "w") as f:
    json.dump({"fds": FDS, "cwd": os.getcwd(), "pgid": os.getpgid(0), "pid": os.getpid()}, f)


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
"""


def described(verdict: Verdict) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    return verdict.status, tuple((c.name, c.status, c.message) for c in verdict.checks)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("warm")
    for name, source in {"correct": CORRECT, "leaks": LEAKS, "finds_no_leak": FINDS_NO_LEAK,
                         "kills_server": KILLS_SERVER, "lists_fds": LISTS_FDS,
                         "tells_parent": TELLS_PARENT,
                         "kills_server_once": KILLS_SERVER_ONCE}.items():
        (folder / f"{name}.py").write_text(source)
    return folder


@pytest.fixture(scope="module")
def piddir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pids")


@pytest.fixture(scope="module")
def warm(piddir: Path) -> Iterator[WarmWorker]:
    """A fork server (where there is one), with the hostile files' pid folder in its
    environment: a warm worker's environment is the tutor's when it started."""
    with pytest.MonkeyPatch.context() as mp:  # for the servers that replace killed ones too
        mp.setenv("GRADTUTOR_TEST_PIDDIR", str(piddir))
        mp.setenv(WRITABLE_ENV, str(piddir))  # the notes learner files leave for the tests
        worker = WarmWorker(environ=dict(os.environ))
        worker.start()  # returns at once; the first check waits for the import
        yield worker
        worker.close()


def left_since(before: set[int]) -> set[int]:
    """The processes below this test process that were not there `before` and run below none
    that was. The module's fork server (`warm`), running since an earlier test, forks the
    child for its next check when it is ready, which on a loaded machine can be after this
    test read `before`: that child is the module's, not this test's."""
    parents = process_parents()

    def below_an_older_one(pid: int) -> bool:
        parent = parents.get(pid)
        while parent is not None and parent != os.getpid():
            if parent in before:
                return True
            parent = parents.get(parent)
        return False

    return {pid for pid in own_descendants() - before if not below_an_older_one(pid)}


def pid_of(worker: WarmWorker) -> int:
    deadline = time.monotonic() + PATIENCE_S
    while worker.pid is None:
        assert time.monotonic() < deadline, "the warm worker did not start"
        time.sleep(0.01)
    return worker.pid


def test_warm_enabled_reads_the_environment() -> None:
    assert warm_enabled({})
    assert warm_enabled({"GRADTUTOR_WARM": "1"})
    for off in ("0", "false", "No", " off "):
        assert not warm_enabled({"GRADTUTOR_WARM": off})


def test_start_returns_at_once_and_close_is_idempotent() -> None:
    worker = WarmWorker(environ=dict(os.environ))
    worker.start()
    worker.start()
    assert worker.loading()  # returned while torch is still being imported (seconds)
    worker.close()
    worker.close()
    assert worker.pid is None


@pytest.mark.slow
@pytest.mark.parametrize("fork", [True, False])
def test_loading_says_whether_a_check_now_would_wait_for_torch(folder: Path,
                                                                fork: bool) -> None:
    """What the exercise screen tells the learner on the first check of a session."""
    worker = WarmWorker(fork=fork, environ=dict(os.environ))
    assert worker.loading()  # not even started: a check would start it and wait
    worker.start()
    assert worker.loading()  # importing torch
    assert worker.wait_ready()
    # a fork server says it is ready; a pre-started worker never does, until it has served
    assert worker.loading() is (not (fork and FORK_SERVER))
    assert worker.check(exercise(), folder / "correct.py", seed=1).passed
    assert not worker.loading()
    worker.close()
    assert not worker.loading()  # closed: no check will wait for anything


@pytest.mark.slow
def test_warm_and_cold_verdicts_agree(warm: WarmWorker, tmp_path: Path) -> None:
    course = load_course(rules=EXERCISE_RULES)
    files: list[tuple[Exercise, Path]] = []
    for exercise_id in ("read-grad", "two-backwards"):
        step = course.find_exercise(exercise_id)
        mutant = step.solution
        for edit in step.mutants[0].replace:
            mutant = mutant.replace(edit.find, edit.with_, 1)
        for kind, source in (("solution", step.solution), ("starter", step.starter),
                             ("mutant", mutant)):
            path = tmp_path / f"{exercise_id}-{kind}.py"
            path.write_text(source)
            files.append((step, path))
    # its sweeps spare the warm worker's processes
    engine = ColdEngine(warm.workers, environ=dict(os.environ))
    with ThreadPoolExecutor(max_workers=3) as pool:  # cold checks wait on imports: overlap
        cold = list(pool.map(lambda f: run_check(f[0], f[1], seed=11, engine=engine), files))
    warm_verdicts = [warm.check(step, path, seed=11) for step, path in files]
    assert [described(v) for v in warm_verdicts] == [described(v) for v in cold]
    assert [v.status for v in warm_verdicts[:3]] == ["pass", "fail", "fail"]
    assert all(v.extra["startup_ms"] < 2000 for v in warm_verdicts[1:])  # no torch import


@pytest.mark.slow
def test_a_check_leaks_nothing_into_the_next(warm: WarmWorker, folder: Path) -> None:
    assert not warm.check(exercise(), folder / "leaks.py", seed=1).passed
    verdict = warm.check(exercise(), folder / "finds_no_leak.py", seed=2)
    assert verdict.passed, verdict.checks
    assert warm.check(exercise(), folder / "correct.py", seed=3).passed


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_the_forked_child_has_only_its_own_fds_folder_and_session(
        warm: WarmWorker, folder: Path, piddir: Path) -> None:
    assert warm.check(exercise(), folder / "lists_fds.py", seed=1).passed
    seen = json.loads((piddir / "fds.json").read_text())
    fds = {int(fd): target for fd, target in seen["fds"].items()}
    assert fds[0] == "/dev/null"
    assert fds[1] == fds[2] and fds[1].startswith("pipe:")  # the output pipe
    (result,) = set(fds) - {0, 1, 2}  # the result pipe, and nothing of the server's
    assert fds[result].startswith("pipe:") and fds[result] != fds[1]
    assert "gradtutor-check-" in seen["cwd"] and not os.path.exists(seen["cwd"])
    assert seen["pgid"] == seen["pid"]  # a session and process group of its own


@pytest.mark.skipif(not FORK_SERVER, reason="only a fork server forks each check")
def test_every_check_is_a_child_of_the_one_warm_server(warm: WarmWorker, folder: Path,
                                                       piddir: Path) -> None:
    """What makes warm checks fast (benchmarks/checks.py measures how fast): each one is
    forked from the server that imported torch once, never a new interpreter."""
    server = pid_of(warm)
    parents = []
    for seed in range(4):
        assert warm.check(exercise(), folder / "tells_parent.py", seed=seed).passed
        parents.append(int((piddir / "parent").read_text()))
    assert parents == [server] * 4 and warm.pid == server


def server_children(server: int) -> list[int]:
    """The fork server's children now: between checks, its reference process and the next
    check's child, waiting."""
    with open(f"/proc/{server}/task/{server}/children", encoding="ascii") as listing:
        return [int(pid) for pid in listing.read().split()]


def at_rest(worker: WarmWorker) -> set[int]:
    """A warm worker's processes between checks: the fork server, its reference process and
    the child it forked for the next check. A learner's leftovers are never among them (they
    become the tutor's when their check's child ends, the tutor being the subreaper)."""
    server = pid_of(worker)
    return {server, *server_children(server)}


WRONG = """
import torch


def read_grad(w, loss_fn):
    return torch.zeros_like(w)
"""


@pytest.mark.slow
@pytest.mark.skipif(not (FORK_SERVER and CONFINED), reason="needs the fork server and Landlock")
def test_learner_code_can_neither_read_nor_kill_the_reference_process(
        warm: WarmWorker, piddir: Path) -> None:
    """The references of a warm check are computed beside its child, by the server's
    reference process: inside the walls, learner code can neither read its memory nor signal
    it, root included (Landlock refuses both towards a process outside the check)."""
    server = pid_of(warm)
    verdict = warm.check(exercise(), HOSTILE / "reaches_reference_process.py", seed=21)
    assert verdict.passed, verdict.checks
    seen = json.loads((piddir / "reaches.json").read_text())
    assert len(seen) == 1, seen  # found it: the server's one other child
    assert list(seen.values()) == [{"mem": "PermissionError", "kill": "PermissionError"}]
    (reference,) = map(int, seen)
    assert reference in server_children(server)  # the same, still running (beside the
    # next check's child, forked since)


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_a_reference_process_killed_by_learner_code_costs_no_verdict(
        folder: Path, piddir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the walls (GRADTUTOR_SANDBOX=0, or a kernel without Landlock) learner code
    can kill the reference process (it runs as the same user); it still cannot read its
    memory unless it is root, since the process is not dumpable. Every later check is then
    judged on references its own worker computes, as cold checks are: no verdict is lost or
    wrong, on seeds whose references nobody had yet."""
    monkeypatch.setenv(SWITCH_ENV, "0")
    monkeypatch.setenv("GRADTUTOR_TEST_PIDDIR", str(piddir))
    (folder / "wrong.py").write_text(WRONG)
    with WarmWorker(environ=dict(os.environ)) as worker:
        server = pid_of(worker)
        verdict = worker.check(exercise(), HOSTILE / "reaches_reference_process.py", seed=31)
        assert verdict.passed, verdict.checks
        # the reference process, and the next check's child if the check was run again
        # (when the reference process died before it answered)
        seen = json.loads((piddir / "reaches.json").read_text()).values()
        assert seen and all(tried["kill"] == "sent" for tried in seen)
        if os.geteuid() != 0:
            assert all(tried["mem"] == "PermissionError" for tried in seen)
        for seed in (32, 33):
            assert worker.check(exercise(), folder / "correct.py", seed=seed).passed
            wrong = worker.check(exercise(), folder / "wrong.py", seed=seed)
            assert wrong.status == "fail", wrong.checks
        assert pid_of(worker) == server  # the server itself was not replaced


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_the_server_s_own_settings_do_not_reach_learner_code(warm: WarmWorker) -> None:
    """The fork server runs with glibc's malloc on huge pages (warm.SERVER_TUNING); the
    variables that ask for it are gone before any learner code runs, so neither it nor what
    it starts sees them."""
    names = (*SERVER_TUNING, TUNED_MARK)
    result = warm.run_snippet(f"import os\nprint(sorted(set(os.environ) & {set(names)!r}))")
    assert result.ok and result.output.strip() == "[]", result


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_a_twin_shares_the_first_server_and_outlives_its_death(folder: Path) -> None:
    """`grade`'s workers after the first: each one's server is forked from the first's (one
    import of torch for the class), judges as it does, checks at the same time as it does,
    and when the first server dies (and the twin's with it) starts a server of its own.
    Nothing is left running once both are closed."""
    (folder / "wrong.py").write_text(WRONG)
    before = own_descendants()
    environ = dict(os.environ)
    with WarmWorker(environ=environ) as leader, WarmWorker(twin_of=leader,
                                                           environ=environ) as twin:
        assert twin.wait_ready()
        first, cloned = pid_of(leader), pid_of(twin)
        assert cloned != first and first in ancestors_of(cloned)
        with ThreadPoolExecutor(max_workers=2) as pool:
            both = [pool.submit(w.check, exercise(), folder / name, seed=41)
                    for w in (leader, twin) for name in ("correct.py", "wrong.py")]
            assert [f.result().status for f in both] == ["pass", "fail", "pass", "fail"]
        os.kill(first, signal.SIGKILL)
        verdict = twin.check(exercise(), folder / "correct.py", seed=42)
        assert verdict.passed, verdict.checks
        assert pid_of(twin) not in (first, cloned) and live([cloned]) == ()
    left = left_since(before)
    assert left == set(), processes_named(left)


def ancestors_of(pid: int) -> list[int]:
    found = []
    while pid > 1:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
        pid = int(data[data.rfind(b")") + 2:].split()[1])
        found.append(pid)
    return found


@pytest.mark.slow
def test_a_server_killed_between_checks_is_replaced(warm: WarmWorker, folder: Path) -> None:
    old = pid_of(warm)
    os.kill(old, signal.SIGKILL)
    verdict = warm.check(exercise(), folder / "correct.py", seed=4)
    assert verdict.passed, verdict.checks
    assert pid_of(warm) != old and live([old]) == ()


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_a_spare_the_server_died_before_telling_of_is_reaped(folder: Path) -> None:
    """A server that dies between forking the next check's child and saying its pid (a
    window a loaded machine opens) leaves that child to the tutor, which never heard of it:
    it is found by the server's session and reaped when the server is replaced, not left a
    zombie below the tutor. Here the tutor is made to forget the pid it was told."""
    with WarmWorker(environ=dict(os.environ)) as worker:
        assert worker.check(exercise(), folder / "correct.py", seed=7).passed
        engine = worker._engine
        assert isinstance(engine, ForkEngine) and engine._ready is not None
        server = engine._ready
        deadline = time.monotonic() + PATIENCE_S
        while "spare" not in server.told:  # the spare forked after that check, told of
            assert time.monotonic() < deadline, "the server told of no spare"
            server.receive(0.05)
        spare = server.told.pop("spare")
        os.kill(server.pid, signal.SIGKILL)
        assert worker.check(exercise(), folder / "correct.py", seed=8).passed
        assert pid_of(worker) != server.pid and live([server.pid, spare]) == ()


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_learner_code_that_kills_the_server_fails_and_the_next_check_passes(
        warm: WarmWorker, folder: Path) -> None:
    old = pid_of(warm)
    before = own_descendants() - {old}
    verdict = warm.check(exercise(), folder / "kills_server.py", seed=5)
    if landlock_abi() >= 6:  # the kill is refused: the learner's own call fails, all else lives
        assert verdict.status == "error", verdict.checks
        assert "PermissionError" in verdict.checks[0].message
        assert pid_of(warm) == old
    else:
        assert verdict.status == "fail", verdict.checks  # judged on what the child reported
        assert verdict.extra["exit_code"] == 0  # reaped by the tutor, its status known
        assert live([old]) == ()
    then = warm.check(exercise(), folder / "correct.py", seed=6)
    assert then.passed, then.checks
    assert pid_of(warm) in own_descendants() - before <= at_rest(warm)


@pytest.mark.slow
@pytest.mark.skipif(not FORK_SERVER, reason="the fork server is Linux's")
def test_unconfined_learner_code_that_kills_the_server_gains_nothing(
        folder: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The fallback where there is no Landlock (here: GRADTUTOR_SANDBOX=0): the kill lands.
    The check's child dies with its server (its parent-death signal), so two endings race:
    the child finishes its checks while the kernel tears the server down (judged on what the
    child reported: the returned None fails), or the death signal lands first (the check is
    an error: killed). Either way the learner gains nothing: no pass, the tutor reaps the
    child and knows its status, and the next check runs on a new server."""
    monkeypatch.setenv(SWITCH_ENV, "0")
    monkeypatch.setenv("GRADTUTOR_TEST_PIDDIR", str(tmp_path))
    with WarmWorker(environ=dict(os.environ)) as worker:
        old = pid_of(worker)
        verdict = worker.check(exercise(), folder / "kills_server_once.py", seed=5)
        # every call (one per case, until the kill lands) was in the one child of that
        # server: if the server's reference process died with it before answering, the
        # references were computed alone, not by running the check again (in a child of a
        # new server, or in a cold worker whose parent is the tutor, which it would kill)
        assert set((tmp_path / "killed").read_text().split()) == {str(old)}
        assert not verdict.passed, verdict.checks
        if verdict.status == "fail":  # the child reported first: judged on what it said,
            # whether it then exited or the death signal caught it on the way out
            assert verdict.extra["exit_code"] in (0, -signal.SIGKILL), verdict.extra
        else:  # the parent-death signal came first
            assert verdict.status == "error", verdict.checks
            assert verdict.extra["exit_code"] == -signal.SIGKILL, verdict.extra
            assert "SIGKILL" in verdict.checks[0].message
        assert live([old]) == ()
        then = worker.check(exercise(), folder / "correct.py", seed=6)
        assert then.passed, then.checks


# The hostile files of tests/hostile_cases.py that meet the fork server here (the forged ones
# meet it in test_forgery.py): (file, status, words).
HOSTILE_CASES = [(name, HOSTILE_FILES[name].status, "\n".join(HOSTILE_FILES[name].said(TIMEOUT)))
                 for name in run_by(FORK, forged=False)]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "status", "says"), HOSTILE_CASES,
                         ids=[case[0] for case in HOSTILE_CASES])
def test_a_hostile_file_ends_cleanly_through_the_warm_path(
        warm: WarmWorker, folder: Path, piddir: Path, name: str, status: str,
        says: str) -> None:
    if not HOSTILE_FILES[name].runs_here:
        pytest.skip(f"needs {HOSTILE_FILES[name].only}")
    pid_of(warm)  # started: its start-up is no part of the check
    before = own_descendants() if LINUX else set()
    started = time.monotonic()
    verdict = warm.check(exercise(TIMEOUT), HOSTILE / f"{name}.py", seed=7)
    took = time.monotonic() - started
    assert verdict.status == status, verdict.checks
    assert says in "\n".join(c.message for c in verdict.checks)
    assert took < TIMEOUT + HANG_S  # it ends, as a check of its time limit
    pidfile = piddir / f"{name}.pids"
    if pidfile.exists():
        assert live([int(p) for p in pidfile.read_text().split()]) == ()
    if LINUX:
        assert own_descendants() - before <= at_rest(warm), "processes outlived the check"
    then = warm.check(exercise(), folder / "correct.py", seed=8)
    assert then.passed, then.checks


@pytest.mark.slow
def test_checks_from_another_thread_and_close_in_the_middle_of_one(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walkthrough's use: checks off the key loop, the first before the worker is ready;
    quitting while a check runs ends it and leaves no process."""
    before = own_descendants() if LINUX else set()
    loops, started = loops_noting(tmp_path, monkeypatch)
    worker = WarmWorker(environ=dict(os.environ))
    worker.start()
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(worker.check, exercise(), folder / "correct.py", seed=9).result()
        assert first.passed, first.checks
        server = pid_of(worker)
        running = pool.submit(worker.check, exercise(timeout=60), loops, seed=1)
        wait_for(started)  # learner code is running
        worker.close()
        verdict = running.result(timeout=PATIENCE_S)
    assert [(c.name, c.status) for c in verdict.checks] == [("stopped", "error")]
    assert "stopped because the tutor was closing" in verdict.checks[0].message
    assert live([server]) == ()
    if LINUX:
        left = left_since(before)
        assert left == set(), processes_named(left)


CTRL_C = """
import os, sys, threading, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from isolation_support import exercise
from gradtutor.runtime.warm import WarmWorker

worker = WarmWorker(environ=dict(os.environ))
worker.start()
assert worker.check(exercise(), Path(sys.argv[2]) / "correct.py", seed=1).passed
print(worker.pid, flush=True)
threading.Thread(target=worker.check, args=(exercise(60), Path(sys.argv[2]) / "loops.py"),
                 kwargs={"seed": 1}, daemon=True).start()
while not (Path(sys.argv[3]) / "loops.pid").exists():
    time.sleep(0.01)
raise KeyboardInterrupt  # as Ctrl+C in the walkthrough, with a check running off the key loop
"""


@pytest.mark.slow
def test_ctrl_c_in_the_tutor_leaves_no_server_and_no_check_running(
        folder: Path, tmp_path: Path) -> None:
    become_subreaper()  # as in a whole run: orphans of the tutor's children come here
    (folder / "loops.py").write_text(LOOPS)
    env = {**os.environ, "GRADTUTOR_TEST_PIDDIR": str(tmp_path), WRITABLE_ENV: str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", CTRL_C, str(Path(__file__).parent),
                           str(folder), str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert "KeyboardInterrupt" in done.stderr and done.returncode != 0
    server, check = int(done.stdout.split()[0]), int((tmp_path / "loops.pid").read_text())
    deadline = time.monotonic() + PATIENCE_S
    while live([server, check]) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = live([server, check])
    assert left == (), (f"server {server}, check {check}", processes_named(set(left)),
                        done.stderr[-2000:])


@pytest.mark.slow
def test_the_pre_started_worker(folder: Path, piddir: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS's and Windows's warm worker: a spawned worker waiting for its one request."""
    monkeypatch.setenv("GRADTUTOR_TEST_PIDDIR", str(piddir))
    monkeypatch.setenv(WRITABLE_ENV, str(piddir))
    before = own_descendants() if LINUX else set()
    with WarmWorker(fork=False, environ=dict(os.environ)) as worker:
        first = pid_of(worker)
        hostile = worker.check(exercise(TIMEOUT), HOSTILE / "fork_children.py", seed=1)
        assert hostile.status == "fail" and first not in own_descendants()
        second = pid_of(worker)  # the next one, pre-started after the first was used
        assert second != first
        os.kill(second, signal.SIGKILL)  # killed while it waits: the check still passes
        verdict = worker.check(exercise(), folder / "correct.py", seed=2)
        assert verdict.passed, verdict.checks
    assert live([first, second]) == ()
    if LINUX:
        left = left_since(before)
        assert left == set(), processes_named(left)


@pytest.mark.slow
def test_the_pre_started_worker_runs_in_its_job_and_a_close_stops_its_check(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows's warm worker, its job faked: each pre-started worker is contained when it
    starts, capped when learner code starts, and its job closed once it is used; closing the
    tutor mid-check ends that check as stopped, not as a crash."""
    before = own_descendants() if LINUX else set()
    loops, started = loops_noting(tmp_path, monkeypatch)
    jobs = FakeJobs()
    worker = WarmWorker(fork=False, contain=jobs, environ=dict(os.environ))
    worker.start()
    first = pid_of(worker)
    assert worker.check(exercise(), folder / "correct.py", seed=3).passed
    used = jobs.jobs[0]
    assert used.pid == first and used.calls[0] == f"cap {MEMORY_BUDGET}"
    assert used.calls[-1] == "close" and used.calls.count("close") == 1
    with ThreadPoolExecutor(max_workers=1) as pool:
        second = pid_of(worker)
        running = pool.submit(worker.check, exercise(timeout=60), loops, seed=1)
        wait_for(started)  # learner code is running: its job was capped
        worker.close()
        verdict = running.result(timeout=PATIENCE_S)
    assert [(c.name, c.status) for c in verdict.checks] == [("stopped", "error")]
    assert [job.pid for job in jobs.jobs] == [first, second]  # none started after close
    assert all(job.calls[-1] == "close" for job in jobs.jobs)
    assert live([first, second]) == ()
    if LINUX:
        left = left_since(before)
        assert left == set(), processes_named(left)


PRELOAD_PROBE = """
import json, sys
from gradtutor.runtime import forkserver, learner, prepare
from gradtutor.checking.checkers import request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mistakes import mutant_source
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Predict
steps = [s for lesson in load_course(rules=EXERCISE_RULES).lessons for s in lesson.steps]
prepare.import_torch_quietly()
prepare.preload()
before = set(sys.modules)
from gradtutor.checking.snippet import run_code  # what a child imports to run a snippet
# what a check's child does before learner code runs (its file and memory limits; the fd
# range it closes), then every check and snippet
prepare.limit_files(1 << 26)
prepare.mapped_bytes()
forkserver._max_fd()
for step in steps:
    if isinstance(step, Exercise):
        sources = [step.solution] + [mutant_source(step, i) for i in range(len(step.mutants))]
        for source in sources:
            learner.evaluate(request_checker(step), step.function, source, "learner.py", 1,
                            lambda message: None)
    elif isinstance(step, (Predict, Demo)):
        run_code(step.code, getattr(step, "show", None))
print(json.dumps(sorted(set(sys.modules) - before)))
"""


@pytest.mark.slow
def test_what_the_warm_worker_preloads_is_all_that_checks_and_snippets_import(
    tmp_path: Path,
) -> None:
    """A check's child setting itself up, every exercise's reference and declared mutants,
    every demo and predict snippet, run after `preload()`, import no module at all: a forked
    child never pays for an import its server could have made (the first optimizer step
    imports torch._dynamo, some 800 modules; `resource` alone cost 1.5 ms a check)."""
    done = subprocess.run([sys.executable, "-c", PRELOAD_PROBE], capture_output=True,
                          text=True, check=True, cwd=tmp_path, timeout=600)
    assert json.loads(done.stdout.splitlines()[-1]) == []


def _statuses(payload: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    return {e["exercise"]: [(c["name"], c["status"]) for c in e["checks"]]
            for e in payload["exercises"]}


@pytest.mark.slow
def test_check_all_on_one_warm_worker_judges_as_the_checkers_do(cli: Cli,
                                                                  tmp_path: Path) -> None:
    """`check --all` runs every exercise on one warm worker: each reference passes, a declared
    mutant fails on the check it names, a missing file is an error; and the verdicts, check by
    check, are those the same files get on the same seed from the checkers run in a plain
    process that imported torch itself (a cold worker's `evaluate`, here for every file in one
    batch process: 21 cold workers one after another took some 50 s of a 2-core machine)."""
    from gradtutor.checking.lesson_proofs import apply_edits

    # every exercise of the course
    exercises = list(load_course(rules=EXERCISE_RULES).exercises().values())
    broken, others = exercises[0], exercises[2:]
    sources = {broken.id: apply_edits(broken.solution, broken, 0),
               **{step.id: step.solution for step in others}}  # exercises[1] has no file
    for exercise_id, source in sources.items():
        (tmp_path / f"{exercise_id}.py").write_text(source, encoding="utf-8")
    code, out, _ = cli("check", "--all", "--json", "--seed", "11", "--workspace", str(tmp_path))
    warm = json.loads(out)
    # every exercise of the course; those of other lessons have no file here
    assert code == 1 and warm["total"] == len(exercises)
    assert warm["passed_count"] == len(others)
    by_id = {e["exercise"]: e for e in warm["exercises"]}
    failed = {c["name"] for c in by_id[broken.id]["checks"] if c["status"] != "pass"}
    assert broken.mutants[0].fails in failed
    assert by_id[exercises[1].id]["checks"][0]["name"] == "file"
    steps = [broken, *others]
    batch = tmp_path / "batch"
    batch.mkdir()
    messages = run_in_batch([{"checker": request_checker(step), "function": step.function,
                              "source": sources[step.id], "seed": 11} for step in steps], batch)
    plain = {step.id: [(c.name, c.status)
                       for c in checks_from(judge_of(step), step.function, said)]
             for step, said in zip(steps, messages, strict=True)}
    assert {k: v for k, v in _statuses(warm).items() if k != exercises[1].id} == plain


@pytest.fixture(scope="module")
def guarded_warm(guarded: Guarded, piddir: Path) -> Iterator[WarmWorker]:
    """A fork server started once `guarded` has moved HOME to its stand-in: the server's
    environment is the tutor's when it started."""
    with WarmWorker(environ=dict(os.environ)) as worker:
        yield worker


@pytest.mark.slow
@pytest.mark.skipif(not (FORK_SERVER and CONFINED), reason="needs the fork server and Landlock")
@pytest.mark.parametrize("name", [*TAMPERING, *(case[0] for case in SIGNALLING)])
def test_a_warm_check_changes_nothing_outside_it_and_signals_no_one(
        name: str, guarded: Guarded, guarded_warm: WarmWorker) -> None:
    """Through the fork server: the files, the progress and the server (the child's parent
    here) are as they were, and the next check passes in the same server."""
    server = pid_of(guarded_warm)
    path = guarded.submissions / f"{name}.py" if name in TAMPERING else HOSTILE / f"{name}.py"
    verdict = guarded_warm.check(exercise(), path, seed=3)
    assert not verdict.passed and verdict.status in ("fail", "error"), verdict.checks
    if name in TAMPERING:
        refused_everything(verdict)
    assert guarded.changes() == []
    then = guarded_warm.check(exercise(), guarded.submissions / "other_student.py", seed=4)
    assert then.passed, then.checks
    assert pid_of(guarded_warm) == server  # neither killed nor stopped


@pytest.mark.slow
def test_every_lesson_solution_passes_inside_the_walls(warm: WarmWorker, tmp_path: Path) -> None:
    """Nothing a lesson needs writes outside the check's folder: every solution still passes
    where learner code is confined (Landlock, where the kernel has it)."""
    course = load_course(rules=EXERCISE_RULES)
    for exercise_id, step in course.exercises().items():
        path = tmp_path / f"{exercise_id}.py"
        path.write_text(step.solution)
        verdict = warm.check(step, path, seed=12)
        assert verdict.passed, (exercise_id, verdict.checks)
