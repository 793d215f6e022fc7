"""The check engine's isolation: learner files that loop, flood, crash, fork, escape, lie and
sabotage each end as a verdict that names the problem, within the time limit, leaving no
process and no temporary folder behind, and the tutor checks a correct file right after.

Every worker pays about 2.5 s to import torch, so the files that need a worker all run once,
three at a time (two cores, and some runs only wait), in a module fixture (`runs`); the tests
then look at what each run left.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hostile_cases import COLD, HOSTILE_FILES, Hostile, run_by
from isolation_support import (
    CORRECT,
    EXPECTED,
    HOSTILE,
    LINUX,
    POSIX,
    ROOT,
    SIGNALLING,
    TAMPERING,
    FakeJob,
    FakeJobs,
    Guarded,
    cold,
    decided,
    error,
    exercise,
    judge_all_pass,
    line,
    live,
    loops_noting,
    needs_walls,
    own_descendants,
    refused_everything,
    wait_for,
    worker_run,
)
from waits import HANG_S, PATIENCE_S

import gradtutor
from gradtutor.checking.check import (
    MEMORY_BUDGET,
    RESULTS_CAP,
    STARTUP_ALLOWANCE,
    Seen,
    check_with,
    snippet_with,
)
from gradtutor.checking.outcome import (
    WorkerRun,
    parse_results,
    source_problem,
)
from gradtutor.checking.protocol import (
    Observed,
    Request,
    Started,
    WorkerExit,
    no_function,
    sys_exit,
)
from gradtutor.checking.verdict import Check, Verdict, overall, to_json
from gradtutor.errors import GradtutorError
from gradtutor.runtime.cold import ColdEngine, run_worker
from gradtutor.runtime.lifetime import remove_tree
from gradtutor.runtime.procfs import descendants
from gradtutor.runtime.run import run_check
from gradtutor.runtime.sandbox import WRITABLE_ENV
from gradtutor.runtime.slot import OUTPUT_CAP
from gradtutor.runtime.spawn import worker_environment
from gradtutor.runtime.spawned import Spawned
from gradtutor.runtime.wire import CHECK_MARK
from gradtutor.ui.safe_text import neutralise, neutralise_verdict

TIMEOUT = 3.0

@dataclass(frozen=True)
class Case:
    """A learner file, the verdict status it must get, and words its checks must contain."""

    name: str
    status: str
    says: tuple[str, ...] = ()
    only: str = "any"  # "posix": needs fork/signals; "linux": needs /proc or RLIMIT_AS

    @property
    def runs_here(self) -> bool:
        return Hostile(self.status, only=self.only).runs_here


# The hostile files of tests/hostile_cases.py that meet the cold path here (the forged ones
# meet it in test_forgery.py), and two files that are not hostile but need a worker too:
# written into a temporary folder by `runs`.
CASES = [Case(name, HOSTILE_FILES[name].status, HOSTILE_FILES[name].said(TIMEOUT),
              HOSTILE_FILES[name].only) for name in run_by(COLD, forged=False)] + [
    Case("missing_function", "error", ("does not define a function named `read_grad`",)),
    Case("wrong_signature", "error", ("must take 2 arguments", "read_grad(w)")),
]
WRITTEN = {
    "missing_function": "def read_gradient(w, loss_fn):\n    return w.grad\n",
    "wrong_signature": "def read_grad(w):\n    return w.grad\n",
}


@dataclass(frozen=True)
class Run:
    verdict: Verdict
    seconds: float  # wall time of run_check
    left_running: tuple[int, ...]  # pids the file wrote down that still existed afterwards


def check_one(case: Case, folder: Path, piddir: Path, engine: ColdEngine) -> Run:
    path = folder / f"{case.name}.py" if case.name in WRITTEN else HOSTILE / f"{case.name}.py"
    started = time.monotonic()
    verdict = run_check(exercise(), path, seed=7, engine=engine)
    seconds = time.monotonic() - started
    pidfile = piddir / f"{case.name}.pids"
    pids = [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []
    return Run(verdict, seconds, live(pids))


@pytest.fixture(scope="module")
def piddir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where hostile files write the pids of the processes they start (and other notes)."""
    return tmp_path_factory.mktemp("pids")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, piddir: Path) -> Iterator[dict[str, Run]]:
    folder = tmp_path_factory.mktemp("learner")
    for name, source in WRITTEN.items():
        (folder / f"{name}.py").write_text(source)
    before = own_descendants() if LINUX else set()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADTUTOR_TEST_PIDDIR", str(piddir))
        mp.setenv(WRITABLE_ENV, str(piddir))  # the notes these files leave for the tests
        here = [case for case in CASES if case.runs_here]
        engine = cold()  # one for the three threads: each one's sweep spares the others
        with ThreadPoolExecutor(max_workers=3) as pool:
            done = dict(zip([c.name for c in here],
                            pool.map(lambda c: check_one(c, folder, piddir, engine), here),
                            strict=True))
    if LINUX:
        assert own_descendants() - before == set(), "processes outlived the checks"
    yield done


@pytest.fixture(scope="module")
def after_all(runs: dict[str, Run], tmp_path_factory: pytest.TempPathFactory) -> Verdict:
    """A correct file, checked once every hostile file has been (each after those before
    it in its lane, the files that pass among them): the tutor still checks. (A correct
    check after each hostile one cost 20 more cold workers, some 45 s of CPU.)"""
    path = tmp_path_factory.mktemp("after-all") / "correct.py"
    path.write_text(CORRECT)
    return run_check(exercise(), path, seed=8, engine=cold())


def assert_documented(verdict: Verdict) -> dict[str, Any]:
    """`to_json(verdict)` survives JSON and has exactly the fields docs/check-format.md lists."""
    document: dict[str, Any] = json.loads(json.dumps(to_json(verdict)))
    assert set(document) == {"exercise", "passed", "status", "checks", "output",
                             "output_truncated", "seed", "duration_ms"}
    assert document["passed"] == (document["status"] == "pass")
    assert document["status"] in ("pass", "fail", "error", "timeout")
    assert isinstance(document["output"], str) and isinstance(document["seed"], int)
    assert isinstance(document["duration_ms"], int) and document["checks"]
    for check in document["checks"]:
        assert {"name", "status", "message"} <= set(check) <= {
            "name", "status", "message", "help", "evidence"}
        assert check["status"] in ("pass", "fail", "error", "timeout", "skip")
    return document


def messages(verdict: Verdict) -> str:
    return "\n".join(f"{c.message}\n{c.help}" for c in verdict.checks)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_learner_file_ends_as_a_verdict_that_names_the_problem(
        case: Case, runs: dict[str, Run]) -> None:
    if not case.runs_here:
        pytest.skip(f"needs {case.only}")
    run = runs[case.name]
    assert run.verdict.status == case.status, messages(run.verdict)
    assert run.verdict.passed == (case.status == "pass")
    for words in case.says:
        assert words in messages(run.verdict)
    # the clock runs from the moment learner code starts; start-up is the worker's import
    startup = (run.verdict.extra["startup_ms"] or 0) / 1000
    assert run.seconds - startup <= TIMEOUT + HANG_S, f"{run.seconds:.1f}s, start-up {startup:.1f}s"
    assert startup <= STARTUP_ALLOWANCE  # the start-up has a limit of its own
    assert run.left_running == ()
    assert "Traceback" not in run.verdict.output  # nothing of the tutor's reaches the learner
    assert assert_documented(run.verdict)["status"] == case.status


@pytest.mark.slow
def test_a_correct_file_passes_every_check_after_every_hostile_one(after_all: Verdict) -> None:
    verdict = after_all
    assert verdict.status == "pass", messages(verdict)
    assert verdict.checks and all(c.status == "pass" for c in verdict.checks)
    assert verdict.seed == 8 and verdict.duration_ms > 0
    assert verdict.output == "" and not verdict.output_truncated


@pytest.mark.slow
def test_the_forked_and_detached_processes_were_there_and_are_gone(
        runs: dict[str, Run], piddir: Path) -> None:
    if not LINUX:
        pytest.skip("needs /proc")
    assert len((piddir / "fork_children.pids").read_text().split()) == 3
    (grandchild,) = (piddir / "setsid_grandchild.pids").read_text().split()
    assert not os.path.exists(f"/proc/{grandchild}")


@pytest.mark.slow
def test_a_detached_process_that_exec_d_another_program_is_gone_and_carried_the_mark(
        runs: dict[str, Run], piddir: Path) -> None:
    if not POSIX:
        pytest.skip("needs fork")
    (grandchild,) = (piddir / "setsid_exec_sleep.pids").read_text().split()
    assert live([int(grandchild)]) == ()
    mark = (piddir / "setsid_exec_sleep.mark").read_text()  # what macOS's sweep looks for
    assert Path(mark).name.startswith("gradtutor-check-") and not Path(mark).exists()


@pytest.mark.slow
def test_the_working_folder_is_removed_even_when_locked(
        runs: dict[str, Run], piddir: Path) -> None:
    if not POSIX:
        pytest.skip("uses POSIX permissions")
    cwd = (piddir / "deletes_cwd.cwd").read_text()
    assert "gradtutor-check-" in cwd
    assert not os.path.exists(cwd)
    assert not os.path.exists(os.path.dirname(cwd))


@pytest.mark.slow
def test_a_print_flood_is_cut_at_the_cap(runs: dict[str, Run]) -> None:
    verdict = runs["output_flood"].verdict
    assert verdict.output_truncated
    assert len(verdict.output.encode()) <= OUTPUT_CAP
    assert verdict.output.startswith("flood line 0\nflood line 1\n")
    assert verdict.extra["output_dropped_bytes"] > 10_000_000


@pytest.mark.slow
def test_output_is_kept_as_printed_and_neutralised_for_the_terminal(
        runs: dict[str, Run]) -> None:
    verdict = runs["escape_codes"].verdict
    assert "\x1b[2J" in verdict.output  # the verdict keeps it (JSON escapes it)
    safe = neutralise_verdict(verdict)
    shown = safe.output + "".join(c.message + c.help for c in safe.checks)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown)
    assert "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07" in safe.output
    assert "\\x9b31m" in safe.output and "PASSED\\r" in safe.output


@pytest.mark.slow
def test_a_huge_exception_message_is_cut(runs: dict[str, Run]) -> None:
    verdict = runs["huge_exception"].verdict
    assert len(messages(verdict)) < 10_000
    assert len(json.dumps(to_json(verdict))) < 20_000


# ---- files judged without a worker -------------------------------------------------------

@pytest.mark.parametrize(("content", "says"), [
    (b"def read_grad(w, loss_fn):\n    return w.grad  # \xff\xfe\n", "not UTF-8 text: line 2"),
    (b"", "Your file is empty"),
    (b"  \n\n\t\n", "Your file is empty"),
    (b"def read_grad(w, loss_fn):\n    return w.grad\n\nif True\n    pass\n",
     "Line 4 of your file is not valid Python"),
    (b"def read_grad(w, loss_fn):\n    return w.grad\x00\n", "Line 2 of your file"),
    (b"x = " + b"(" * 300 + b")" * 300 + b"\n", "Line 1 of your file"),
])
def test_a_file_that_cannot_run_fails_before_any_process(
        tmp_path: Path, content: bytes, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    path = tmp_path / "answer.py"
    path.write_bytes(content)

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started for a file that cannot run")

    monkeypatch.setattr(subprocess, "Popen", no_process)  # the runtime's one start path
    verdict = run_check(exercise(), path, seed=3, engine=cold())
    assert verdict.status == "error" and not verdict.passed
    (check,) = verdict.checks
    assert check.name == "file" and says in check.message, check.message
    assert_documented(verdict)


def test_a_syntax_error_shows_the_line_and_where() -> None:
    src = b"def read_grad(w, loss_fn):\n    return w.grad +\n"
    check = source_problem(src, "answer.py", "read_grad", 1 << 20)
    assert check is not None
    assert check.message.startswith("Line 2 of your file is not valid Python: invalid syntax")
    assert "return w.grad +\n" in check.message and check.message.endswith("^")


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(GradtutorError) as raised:
        run_check(exercise(), tmp_path / "nope.py", seed=1, engine=cold())
    assert raised.value.exit_code == 2
    assert "nope.py" in raised.value.message


def test_a_huge_file_fails_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"# padding\n" * 200_000)
    verdict = run_check(exercise(), path, seed=1, engine=cold())
    assert verdict.status == "error" and "MiB" in verdict.checks[0].message


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="SIGALRM and /proc")
def test_interrupting_the_tutor_mid_check_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal
    import tempfile

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the check's folder goes
    before = own_descendants()
    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)  # Ctrl+C while the worker runs
    try:
        with pytest.raises(KeyboardInterrupt):
            run_check(exercise(timeout=60), HOSTILE / "infinite_loop.py", seed=1, engine=cold())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert own_descendants() - before == set()
    assert list(tmp_path.iterdir()) == []


# ---- the walls (Landlock): nothing outside the check's folder changes, no signal leaves it --

@dataclass(frozen=True)
class Walled:
    verdict: Verdict
    changes: list[str]  # what differed afterwards (put back since)


@pytest.fixture(scope="module")
def walled(guarded: Guarded) -> dict[str, Walled]:
    """Each file that tampers or signals, checked cold one after another, with what it
    changed; then `other_student.py`, a correct file, once after all of them (a correct check
    after each cost 6 more cold workers): the tutor still checks, and it passes."""
    done = {}
    for name in TAMPERING:
        verdict = run_check(exercise(), guarded.submissions / f"{name}.py", seed=3,
                            engine=cold())
        done[name] = Walled(verdict, guarded.changes())
    for name, _, _ in SIGNALLING:
        verdict = run_check(exercise(), HOSTILE / f"{name}.py", seed=5, engine=cold())
        done[name] = Walled(verdict, guarded.changes())
    then = run_check(exercise(), guarded.submissions / "other_student.py", seed=4,
                     engine=cold())
    done["after"] = Walled(then, guarded.changes())
    return done


@pytest.mark.slow
@needs_walls
@pytest.mark.parametrize("name", TAMPERING)
def test_learner_code_cannot_change_the_tutor_its_progress_or_other_files(
        name: str, walled: dict[str, Walled]) -> None:
    verdict = walled[name].verdict
    assert verdict.status == "fail", messages(verdict)
    refused_everything(verdict)
    assert walled[name].changes == []


@pytest.mark.slow
@needs_walls
def test_a_correct_file_passes_after_the_files_that_tamper_and_signal(
        walled: dict[str, Walled]) -> None:
    assert walled["after"].verdict.passed, messages(walled["after"].verdict)
    assert walled["after"].changes == []


@pytest.mark.slow
@needs_walls
def test_check_all_with_hostile_files_changes_nothing_outside_the_checks(
        guarded: Guarded, cli: Any, tmp_path: Path) -> None:
    for exercise_id, name in zip(("read-grad", "none-before-backward", "two-backwards"),
                                 TAMPERING, strict=True):
        (tmp_path / f"{exercise_id}.py").write_bytes((HOSTILE / f"{name}.py").read_bytes())
    code, out, err = cli("check", "--all", "--json", "--workspace", str(tmp_path),
                         environ={"GRADTUTOR_HOME": str(guarded.data)})
    report = json.loads(out)
    assert code == 1 and report["passed_count"] == 0, err
    ran = [e for e in report["exercises"] if e["output"]]
    assert len(ran) == 3 and all("refused" in e["output"] for e in ran)
    assert guarded.changes() == []
    assert "Landlock" not in err  # confined: no notice


@pytest.mark.slow
@needs_walls
@pytest.mark.parametrize(("name", "status", "says"), SIGNALLING,
                         ids=[case[0] for case in SIGNALLING])
def test_learner_code_cannot_signal_the_tutor(name: str, status: str, says: str,
                                              walled: dict[str, Walled]) -> None:
    """In a cold check the worker's parent is the tutor (this test process): it must not be
    killed or stopped (this test runs), and the verdict is a clean failure."""
    verdict = walled[name].verdict
    assert verdict.status == status, messages(verdict)
    assert says in messages(verdict)
    assert walled[name].changes == []


@pytest.mark.slow
@needs_walls
@pytest.mark.parametrize("name", ["kills_parent", "stops_parent", "kills_parent_group"])
def test_the_script_that_ran_gradtutor_check_goes_on(name: str, tmp_path: Path) -> None:
    """`gradtutor check` run by a grading script, in the script's process group: the learner
    file's signal reaches neither, and the script reads the exit code."""
    script = (f'"{sys.executable}" -m gradtutor check read-grad "{HOSTILE / name}.py"; '
              'echo "the script goes on: $?"')
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120,
                          start_new_session=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "the script goes on: 1" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0


@pytest.mark.slow
@needs_walls
def test_learner_code_cannot_reach_an_abstract_socket_outside_its_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import uuid

    name = f"gradtutor-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("GRADTUTOR_TEST_SOCKET", name)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("\0" + name)
        listener.listen(1)
        verdict = run_check(exercise(), HOSTILE / "connects_abstract_socket.py", seed=1,
                            engine=cold())
    # EPERM from Landlock's scope, or ECONNREFUSED: in the check's own network namespace
    # (netns.py) the computer's abstract sockets do not exist
    assert verdict.status == "fail" and re.search(r"refused \((1|111)\)", verdict.output), (
        verdict.output)


def test_the_rights_asked_for_are_those_the_kernel_knows() -> None:
    from gradtutor.runtime import sandbox

    assert sandbox.write_rights(1) == sandbox._WRITE_V1
    assert sandbox.write_rights(3) & sandbox.TRUNCATE and not sandbox.write_rights(2) & (
        sandbox.TRUNCATE | sandbox.IOCTL_DEV)
    assert sandbox.write_rights(7) == sandbox.write_rights(5) == (1 << 16) - 1 - 1 - 4 - 8
    assert sandbox.scopes(5) == 0 and sandbox.scopes(6) == 3


def test_one_plain_notice_where_code_cannot_be_confined() -> None:
    from gradtutor.runtime.sandbox import unavailable_notice

    if not LINUX:
        assert unavailable_notice(0, {}) is None
        return
    assert unavailable_notice(7, {}) is None
    assert "no Landlock" in (unavailable_notice(0, {}) or "")
    assert "version 4" in (unavailable_notice(4, {}) or "")
    assert "GRADTUTOR_SANDBOX=0" in (unavailable_notice(7, {"GRADTUTOR_SANDBOX": "0"}) or "")


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="the notice is about Linux's Landlock")
def test_check_gives_the_notice_once_when_the_sandbox_is_off(
        cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADTUTOR_SANDBOX", "0")  # the worker reads the tutor's environment
    for exercise_id in ("read-grad", "two-backwards"):
        (tmp_path / f"{exercise_id}.py").write_text(CORRECT)
    code, _, err = cli("check", "--all", "--workspace", str(tmp_path),
                       environ={"GRADTUTOR_SANDBOX": "0"})
    assert code == 1 and err.count("Note:") == 1 and "GRADTUTOR_SANDBOX=0" in err


# ---- the pure decisions, with no process -------------------------------------------------

OBSERVED: Observed = {"type": "observed",
                            "observed": [{"returned": [2.0]}, {"returned": [4.0]}]}


@pytest.mark.parametrize(("run", "name", "status", "says"), [
    (worker_run(EXPECTED, OBSERVED), "values", "pass", "2 of 2 right"),
    (worker_run(EXPECTED, returncode=-9, timed_out=True), "time-limit", "timeout",
     "Your code was still running after 10 s: look for a loop that never ends or a call "
     "that waits for input."),
    (worker_run(EXPECTED, returncode=-11), "process", "error", "segmentation fault"),
    (worker_run(EXPECTED, returncode=-9), "process", "error", "most likely it ran out of memory"),
    (worker_run(EXPECTED, returncode=-25), "process", "error", "larger than the 64 MiB limit"),
    (worker_run(EXPECTED, returncode=-6), "process", "error", "aborted (SIGABRT)"),
    (worker_run(EXPECTED, returncode=0xC0000005), "process", "error", "access violation"),
    (worker_run(EXPECTED, returncode=3), "process", "error",
     "ended the process (exit code 3) before the checks could finish"),
    (worker_run(EXPECTED, raw=b'{"type": "observ'), "process", "error", "exit code 0"),
    (worker_run(EXPECTED, returncode=WorkerExit.OUT_OF_MEMORY), "memory", "error", "2 GiB"),
    (worker_run(EXPECTED, returncode=WorkerExit.CHANNEL_LOST), "process", "error", "channel"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [
        {"returned": [2.0]}, {"error": error("MemoryError")}]}), "memory", "error",
     "Your code ran out of memory (the limit is 2 GiB)."),
    (worker_run(EXPECTED, {"type": "observed", "observed": [{"error": error(
        "RuntimeError", "DefaultCPUAllocator: can't allocate memory: you tried")}, {}]}),
     "memory", "error", "ran out of memory"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [{"error": error(  # Windows
        "RuntimeError", "DefaultCPUAllocator: not enough memory: you tried")}, {}]}),
     "memory", "error", "ran out of memory"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [{}, {"error": error(
        "ZeroDivisionError", "division by zero", 'File "a.py", line 3, in read_grad\n')}]}),
     "runs", "error", "`read_grad` stopped on check case 2 of 2: your code raised "
     "ZeroDivisionError: division by zero.\n\nFile \"a.py\", line 3"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [{"error": sys_exit("3", "")}, {}]}),
     "runs", "error", "sys.exit(3)"),
    (worker_run(EXPECTED, {"type": "learner_error", "stage": "load",
                           "error": error("KeyboardInterrupt")}),
     "loads", "error", "Your file could not be loaded: your code raised KeyboardInterrupt."),
    (worker_run(EXPECTED, {"type": "learner_error", "stage": "function",
                           "error": no_function("read_grad")}),
     "function", "error", "Your file does not define a function named `read_grad`."),
    (worker_run({"type": "worker_error", "error": error(
        "ModuleNotFoundError", "No module named 'torch'")}, returncode=70),
     "start-up", "error", "install PyTorch"),
    (worker_run(returncode=1), "start-up", "error", "could not start (exit code 1)"),
    (worker_run(returncode=-9, startup_timed_out=True), "start-up", "error",
     "not ready after 120 s"),
    (worker_run(EXPECTED, {"type": "worker_error", "error": error("TypeError", "bad __str__")},
                returncode=70), "process", "error", "unexpected error (TypeError: bad __str__)"),
    (worker_run(EXPECTED, raw=b"garbage\n"), "results", "error", "a line that is not a result"),
    (worker_run(EXPECTED, raw=b"[1, 2]\n"), "results", "error", "a line that is not a result"),
    (worker_run(EXPECTED, raw=b"[" * 100_000 + b"\n"), "results", "error", "not a result"),
    (worker_run(EXPECTED, EXPECTED), "results", "error", "out of order"),
    (worker_run(OBSERVED), "results", "error", "out of order"),
    (worker_run(EXPECTED, OBSERVED, OBSERVED), "results", "error", "out of order"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [{}]}), "results", "error",
     "wrong shape"),
    (worker_run(EXPECTED, {"type": "observed", "observed": [1, 2]}), "results", "error",
     "wrong shape"),
    (worker_run(EXPECTED, {"type": "learner_error", "stage": "load", "error": "x"}),
     "results", "error", "wrong shape"),
    (worker_run({"type": "worker_error", "error": "x"}), "results", "error", "wrong shape"),
    (worker_run(EXPECTED, OBSERVED, results_overflow=True), "results", "error",
     "more than 8 MiB"),
])
def test_every_ending_becomes_checks(run: WorkerRun, name: str, status: str, says: str) -> None:
    checks = decided(run)
    assert (checks[0].name, checks[0].status) == (name, status)
    assert says in checks[0].message + checks[0].help, checks[0].message
    verdict = Verdict("read-grad", overall(checks), checks, seed=1, duration_ms=5)
    assert assert_documented(verdict)["status"] == status


def test_the_judge_sees_only_decoded_plain_data_and_its_failure_is_a_check() -> None:
    seen: list[object] = []

    def judge(cases: list[Any], expected: list[Any], observed: list[Any]) -> list[Check]:
        seen.extend([cases, expected, observed])
        raise KeyError("returned")

    nan = b'{"type": "observed", "observed": [{"returned": [NaN]}, {"returned": [1e999]}]}\n'
    (check,) = decided(worker_run(EXPECTED, raw=nan), judge)
    assert check.name == "results" and "KeyError" in check.message
    assert seen[0] == EXPECTED["cases"] and str(seen[2]) == "[{'returned': [nan]}, " \
        "{'returned': [inf]}]"


STARTED: Started = {"type": "started"}


def test_references_the_tutor_had_from_elsewhere_stand_for_the_workers() -> None:
    """A warm check's worker never holds the references: it says `started` where it would
    send them, and the tutor's own (from the fork server's reference process) are judged
    against. A worker that sends references of its own then is out of order, whatever they
    say: learner code holds the result pipe and could write any."""
    results = parse_results(line(STARTED) + line(OBSERVED), False, RESULTS_CAP, EXPECTED)
    assert results.problem is None
    assert results.expected == EXPECTED and results.final == OBSERVED
    forged = dict(EXPECTED, expected=[{"grad": [0.0]}, {"grad": [0.0]}])
    for data in (line(forged) + line(OBSERVED), line(STARTED) + line(forged) + line(OBSERVED),
                 line(OBSERVED), line(STARTED) + line(STARTED) + line(OBSERVED)):
        results = parse_results(data, False, RESULTS_CAP, EXPECTED)
        assert results.problem is not None and results.expected is None, data
    # and without references of the tutor's, `started` is no result at all
    assert parse_results(line(STARTED) + line(OBSERVED), False, RESULTS_CAP).problem
    (check,) = decided(worker_run(STARTED, OBSERVED, reference=EXPECTED), judge_all_pass)
    assert (check.name, check.status) == ("values", "pass")
    (check,) = decided(worker_run(STARTED, reference=EXPECTED, returncode=-9), judge_all_pass)
    assert check.status == "error" and "SIGKILL" in check.message


def test_an_unfinished_last_line_is_dropped() -> None:
    results = parse_results(line(EXPECTED) + b'{"type": "obs', False, RESULTS_CAP)
    assert results.problem is None and results.final is None


@pytest.mark.parametrize(("text", "shown"), [
    ("plain\ttext\nline two", "plain\ttext\nline two"),
    ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),
    ("title\x1b]0;pwned\x07", "title\\x1b]0;pwned\\x07"),
    ("c1 \x9b31m and \x85", "c1 \\x9b31m and \\x85"),
    ("del\x7f nul\x00 bs\x08", "del\\x7f nul\\x00 bs\\x08"),
    ("win\r\nline", "win\nline"),
    ("over\rwrite", "over\\rwrite"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("ünïcode ✓ stays", "ünïcode ✓ stays"),
])
def test_neutralise_shows_control_characters(text: str, shown: str) -> None:
    assert neutralise(text) == shown


def test_neutralise_verdict_reaches_every_string() -> None:
    from gradtutor.checking.verdict import Table

    verdict = Verdict("x", "fail", (Check("a", "fail", "m\x1b[2J", "h\x07",
                                          Table(("c\x1b",), (("v\x9b",),))),), 1, 2,
                      output="o\x1b")
    safe = neutralise_verdict(verdict)
    (check,) = safe.checks
    assert (check.message, check.help, safe.output) == ("m\\x1b[2J", "h\\x07", "o\\x1b")
    assert check.evidence is not None
    assert (check.evidence.columns, check.evidence.rows) == (("c\\x1b",), (("v\\x9b",),))


def test_the_worker_environment_imports_this_gradtutor_on_one_thread() -> None:

    env = worker_environment({"PYTHONPATH": "/elsewhere", "PYTHONWARNINGS": "error",
                              "PYTHONFAULTHANDLER": "1", "HOME": "/home/x"})
    root = str(Path(gradtutor.__file__).resolve().parents[1])
    assert env["PYTHONPATH"] == os.pathsep.join([root, "/elsewhere"])
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert "PYTHONWARNINGS" not in env and "PYTHONFAULTHANDLER" not in env
    assert env["HOME"] == "/home/x"
    assert CHECK_MARK not in env


def test_the_worker_environment_carries_this_check_s_mark_only() -> None:
    outer = {CHECK_MARK: "/tmp/gradtutor-check-outer", "HOME": "/home/x"}
    assert worker_environment(outer, mark="/tmp/gradtutor-check-ab")[CHECK_MARK] == (
        "/tmp/gradtutor-check-ab")
    assert CHECK_MARK not in worker_environment(outer)  # a tutor run inside a check


# ---- the tutor ends a check itself: it is closing ----------------------------------------

def stopped_run(request: Request, timeout: float) -> tuple[WorkerRun, Seen]:
    """What a worker killed by `Workers.stop` leaves: SIGKILL, no results, marked stopped."""
    return worker_run(EXPECTED, returncode=-9), Seen("half a line", 0, 2500, stopped=True)


def test_a_check_the_tutor_stopped_says_so_and_not_out_of_memory(tmp_path: Path) -> None:
    path = tmp_path / "answer.py"
    path.write_text(CORRECT)
    verdict = check_with(stopped_run, exercise(), path, seed=3, timeout=None)
    (check,) = verdict.checks
    assert (verdict.status, check.name, check.status) == ("error", "stopped", "error")
    assert "stopped because the tutor was closing" in check.message
    assert "memory" not in check.message + check.help and "read-grad" in check.help
    assert verdict.output == "half a line"
    assert assert_documented(verdict)["status"] == "error"
    # the same run, not stopped by the tutor, is a SIGKILL from outside
    killed = check_with(lambda r, t: (stopped_run(r, t)[0], Seen("", 0, None)), exercise(),
                        path, seed=3, timeout=None)
    assert "SIGKILL" in killed.checks[0].message


def test_a_snippet_the_tutor_stopped_says_so() -> None:
    result = snippet_with(stopped_run, "x = 1", show=None, series=(), timeout=20)
    assert not result.ok and result.error == "stopped because the tutor was closing"


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="counts the tutor's descendants in /proc")
def test_stop_workers_ends_a_running_check_as_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = own_descendants()
    loops, started = loops_noting(tmp_path, monkeypatch)
    engine = cold()
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(run_check, exercise(timeout=60), loops, seed=1, engine=engine)
        wait_for(started)  # learner code is running
        engine.close()
        verdict = running.result(timeout=PATIENCE_S)
    # stopped, not run to its 60 s limit (that would be a timeout): no clock needed
    assert [(c.name, c.status) for c in verdict.checks] == [("stopped", "error")]
    assert own_descendants() - before == set()


# ---- Windows's job, faked: what the spawn path asks of it --------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("name", "status"), [("correct", "pass"), ("infinite_loop", "timeout")])
def test_the_cold_worker_runs_in_its_job_capped_once_learner_code_starts(
        tmp_path: Path, name: str, status: str) -> None:
    (tmp_path / "correct.py").write_text(CORRECT)
    path = tmp_path / "correct.py" if name == "correct" else HOSTILE / f"{name}.py"
    jobs = FakeJobs()
    environ = dict(os.environ)
    verdict = check_with(lambda r, t: run_worker(r, t, contain=jobs, environ=environ),
                         exercise(1.0), path,
                         seed=2, timeout=None)
    assert verdict.status == status, messages(verdict)
    (job,) = jobs.jobs
    assert job.calls[0] == f"cap {MEMORY_BUDGET}"  # after the import, before learner code
    assert "kill" in job.calls[1:]  # at the deadline, and after the end: the leftovers
    assert job.calls[-1] == "close" and job.calls.count("close") == 1


def test_a_job_that_refuses_the_cap_leaves_the_memory_uncapped() -> None:
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    job = FakeJob(proc.pid)
    refused, capped = Spawned(proc, FakeJob(proc.pid, refuse=True)), Spawned(proc, job)
    for worker in (refused, capped):
        worker.learner_starts(MEMORY_BUDGET)
    assert (refused.memory_capped, capped.memory_capped) == (False, True)
    assert not Spawned(proc).memory_capped  # no job: nothing for the tutor to cap
    capped.release()
    capped.release()
    assert job.calls == [f"cap {MEMORY_BUDGET}", "close"]  # closed once, however often asked


def test_descendants_follow_parents_and_spare_what_existed() -> None:
    table = {1: (0, "S"), 10: (1, "S"), 11: (10, "S"), 12: (11, "Z"), 20: (10, "S"),
             21: (20, "S"), 30: (1, "S")}
    assert descendants(table, 10) == {11, 12, 20, 21}
    assert descendants(table, 10, spared={20}) == {11, 12}
    assert descendants(table, 30) == set()


def test_remove_tree_opens_locked_folders(tmp_path: Path) -> None:
    if not POSIX:
        pytest.skip("POSIX permissions")
    root = tmp_path / "check"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    (root / "link").symlink_to(tmp_path)  # never followed: tmp_path keeps its mode
    os.chmod(root / "a" / "b", 0)
    os.chmod(root / "a", 0o500)
    os.chmod(root, 0o500)
    mode = os.stat(tmp_path).st_mode
    remove_tree(root)
    assert not root.exists() and os.stat(tmp_path).st_mode == mode
