"""Running one check (or lesson snippet): the learner's code in a worker process, under
limits, with a clock.

The tutor's side of the isolation. It reads the file, prepares a `Slot` (a fresh temporary
folder, no stdin, an output pipe and a private result pipe), starts `gradtutor.checking.worker`
there, drains both pipes, kills the worker's whole process tree when time is up or the check
is over (`supervise`), and hands what it saw to `outcome.decide` (pure) for the Verdict. This
process never runs learner code. `run_check` and `run_snippet` use a cold worker that imports
torch first; warm.py runs the same requests through the same `supervise` in a warm one.

Nothing is left running: on Linux the tutor becomes a child subreaper, so even a learner's
double-forked, `setsid` daemon re-parents to it and is found and killed after the check. On
macOS the worker's group is killed, then every process of the user's whose command line or
environment carries the check's mark (GRADTUTOR_CHECK_MARK, inherited through fork and exec).
On Windows the worker runs in a Job Object (winjob.py) that takes everything it starts down
with it. docs/isolation.md has the whole picture.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import gradtutor
from gradtutor.checking import protocol
from gradtutor.checking.checkers import CHECKERS
from gradtutor.checking.checkers import load as load_checker
from gradtutor.checking.lifetime import (
    cleanup_before_termination,
    guard_memory,
    owned_prefix,
    sweep_abandoned,
)
from gradtutor.checking.outcome import GiB, MiB, WorkerRun, decide, source_problem
from gradtutor.checking.snippet import SnippetResult, snippet_result
from gradtutor.checking.verdict import Check, Verdict, overall
from gradtutor.checking.worker import CHECK_MARK
from gradtutor.errors import GradtutorError
from gradtutor.files import FileTooLarge
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise, Parsons
from gradtutor.workspace import MAX_FILE_BYTES, read_exercise_file

MEMORY_BUDGET = 2 * GiB  # address space learner code may add to the worker's (Linux)
FILE_BUDGET = 64 * MiB  # the largest file learner code may write (POSIX)
OUTPUT_CAP = 64 * 1024  # learner output kept, stdout and stderr together
RESULTS_CAP = 8 * MiB  # result-channel bytes accepted
MAX_SOURCE_BYTES = MAX_FILE_BYTES
STARTUP_ALLOWANCE = 120.0  # seconds to import torch before learner code runs; not theirs
EXIT_GRACE = 2.0  # seconds a worker may take to exit once its results are complete

LINUX = sys.platform.startswith("linux")

# Environment a learner's process should not inherit from the tutor's: settings that would
# turn torch's import warnings into errors or show torch's internal ones, print tracebacks
# or import logs of ours into the learner's output, or wait at a prompt with nobody there.
_DROPPED_ENV = ("PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTHONVERBOSE",
                "PYTHONIMPORTTIME", "PYTHONINSPECT", "PYTHONSTARTUP")


def run_check(exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
    """Check the learner's file `path` against `exercise`'s checker, on inputs from `seed`.

    `timeout` (default: the exercise's) is the time the learner's code may run; the worker's
    start-up (importing torch, computing references) is not counted. A missing or unreadable
    file raises GradtutorError; every other problem, down to a crash, is a failed Verdict."""
    return check_with(run_worker, exercise, path, seed=seed, timeout=timeout)


def check_with(run: RunWorker, exercise: Exercise, path: Path, *, seed: int,
               timeout: float | None) -> Verdict:
    """`run_check`, with the worker run by `run` (a cold worker, or a warm one)."""
    started = time.monotonic()
    limit = exercise.timeout if timeout is None else timeout
    if exercise.checker not in CHECKERS:
        raise GradtutorError(f"exercise {exercise.id} names an unknown checker "
                             f"{exercise.checker!r}", "fix the lesson file")
    try:
        raw = read_learner_file(path)
    except FileTooLarge as exc:  # judged unread, as any file too large to check
        raw, size = b"", exc.size
    else:
        size = len(raw)
    problem = source_problem(raw, str(path), exercise.function, MAX_SOURCE_BYTES, size=size)
    if problem is not None:
        return Verdict(exercise.id, "error", (problem,), seed, _ms_since(started))
    request = protocol.check_request(
        checker=exercise.checker, function=exercise.function, source=raw.decode("utf-8-sig"),
        filename=str(path), seed=seed, memory_bytes=MEMORY_BUDGET, file_bytes=FILE_BUDGET)
    with cleanup_before_termination():
        worker_run, seen = run(request, limit)
    checks = (stopped_check(exercise.id),) if seen.stopped else decide(
        worker_run, load_checker(exercise.checker).judge, function=exercise.function,
        timeout=limit, startup_allowance=STARTUP_ALLOWANCE, results_cap=RESULTS_CAP)
    return Verdict(exercise.id, overall(checks), checks, seed, _ms_since(started),
                   output=seen.output, output_truncated=seen.dropped > 0,
                   extra={"startup_ms": seen.startup_ms, "exit_code": worker_run.returncode,
                          "output_dropped_bytes": seen.dropped})


def run_snippet(code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                timeout: float = 20.0) -> SnippetResult:
    """Run a lesson's snippet (a predict or demo step) in a fresh worker, isolated and timed
    like a check; `show` is an expression whose str() is wanted afterwards, `series` the
    variables wanted as numbers."""
    return snippet_with(run_worker, code, show=show, series=series, timeout=timeout)


def snippet_with(run: RunWorker, code: str, *, show: str | None, series: tuple[str, ...],
                 timeout: float) -> SnippetResult:
    """`run_snippet`, with the worker run by `run`."""
    started = time.monotonic()
    request = protocol.snippet_request(code=code, show=show, series=series,
                                       memory_bytes=MEMORY_BUDGET, file_bytes=FILE_BUDGET)
    worker_run, seen = run(request, timeout)
    return snippet_result(worker_run, seen.output, series=series, timeout=timeout,
                          startup_allowance=STARTUP_ALLOWANCE,
                          duration_ms=_ms_since(started), stopped=seen.stopped)


def stopped_check(exercise_id: str) -> Check:
    """The check of a run the tutor ended itself because it was closing (not a crash, not
    the learner's time limit: their code was simply not judged)."""
    return Check("stopped", "error",
                 msg("The check was stopped because the tutor was closing, so your code was "
                     "not judged."),
                 msg("check it again: gradtutor check {exercise}", exercise=exercise_id))


def check_order_file(step: Parsons, path: Path) -> Verdict:
    """The verdict on a line-ordering step's answer file; one too large is judged unread."""
    from gradtutor.checking.parsons import MAX_ANSWER_BYTES, grade_file

    try:
        return grade_file(step, read_exercise_file(path, MAX_ANSWER_BYTES), str(path))
    except FileTooLarge as exc:
        return grade_file(step, b"", str(path), size=exc.size)


def read_learner_file(path: Path) -> bytes:
    """The learner's file as bytes, read by the tutor (the worker gets this copy); at most
    MAX_SOURCE_BYTES + 1 of them are read (FileTooLarge beyond), never from a pipe."""
    return read_exercise_file(path, MAX_SOURCE_BYTES)


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def worker_environment(base: Mapping[str, str], mark: str | None = None) -> dict[str, str]:
    """The worker's environment: the tutor's, made to import this very gradtutor, with one
    thread per numeric library, UTF-8 output, and the settings in _DROPPED_ENV removed; and
    `mark` (the check's folder) as CHECK_MARK, which whatever the learner starts inherits, so
    the sweep finds it where there is no subreaper (macOS)."""
    env = {k: v for k, v in base.items() if k not in _DROPPED_ENV and k != CHECK_MARK}
    if mark is not None:
        env[CHECK_MARK] = mark
    root = str(Path(gradtutor.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [base.get("PYTHONPATH")])])
    env.update({
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "PYTHONIOENCODING": "utf-8:backslashreplace",  # a Windows console code page won't do
        "PYTHONUNBUFFERED": "1",  # stdout and stderr share one pipe, in the order printed
        "PYTHONSAFEPATH": "1",  # nothing importable from the working directory (3.11+)
        "PYTHONBREAKPOINT": "0",  # a forgotten breakpoint() must not wait for a debugger
    })
    return env


@dataclass(frozen=True)
class Seen:
    """What the tutor kept of a run besides the results: the output and when things began."""

    output: str
    dropped: int
    startup_ms: int | None
    stopped: bool = False  # the tutor ended the run because it was closing (`stop_workers`)


# How a request is run: in a fresh cold worker (`run_worker`), or by a warm one (warm.py).
RunWorker = Callable[[protocol.Request, float], tuple[WorkerRun, Seen]]


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first `cap` bytes and counting the rest, so a
    writer never blocks on a full pipe and a flood never grows the tutor. For the result
    channel it also notes when the first and second line arrived.

    The drain owns its fd and closes it at the end: if a process that escaped the cleanup
    still holds the pipe open (macOS, Windows), the tutor stops waiting for the drain, but
    the fd is not closed under it and reused for something else."""

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0
        self.lines = 0
        self.first_line = threading.Event()  # "expected" arrived: learner code starts now
        self.first_line_at = 0.0
        self._on_first_line: Callable[[], None] | None = None
        self._callback_lock = threading.Lock()
        self.complete = threading.Event()  # the final message arrived
        self.complete_at = 0.0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self._take(chunk)
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def when_first_line(self, callback: Callable[[], None]) -> None:
        """Call `callback` (once, in the drain's thread) as soon as the first line arrives, or
        now if it has: the moment learner code is about to start."""
        with self._callback_lock:
            arrived = self.first_line.is_set()
            if not arrived:
                self._on_first_line = callback
        if arrived:
            callback()

    def _take(self, chunk: bytes) -> None:
        room = max(0, self.cap - len(self.kept))
        self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - room)
        if self.lines < 2 and b"\n" in chunk:
            self.lines += chunk.count(b"\n")
            now = time.monotonic()
            if not self.first_line.is_set():
                self.first_line_at = now
                with self._callback_lock:
                    self.first_line.set()
                    callback = self._on_first_line
                if callback is not None:
                    with contextlib.suppress(Exception):  # the drain must go on reading
                        callback()
            if self.lines >= 2:
                self.complete_at = now
                self.complete.set()


class Slot:
    """What the tutor owns for one run: a fresh folder (the learner's working directory is
    `work` inside it, the request is written beside it), the output pipe and the private
    result pipe, and the drains that read them. `close` leaves nothing of it behind."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix=owned_prefix()))  # names the tutor owning it
        self.work = self.base / "work"
        self.request_path = self.base / "request.json"
        self._unowned: list[int] = []  # fds no drain has taken over yet
        try:
            self.work.mkdir()
            self.output_r, self.output_w = self._pipe()
            self.results_r, self.results_w = self._pipe()
        except BaseException:
            self.close()
            raise
        self.output = _Drain(self.output_r, OUTPUT_CAP)
        self.results = _Drain(self.results_r, RESULTS_CAP)

    def _pipe(self) -> tuple[int, int]:
        pair = os.pipe()
        self._unowned.extend(pair)
        return pair

    def write_request(self, request: protocol.Request) -> None:
        self.request_path.write_text(json.dumps(request), encoding="utf-8")

    def handed_over(self) -> None:
        """The worker has its copies of the write ends: close ours (EOF needs that) and start
        draining."""
        for fd in (self.output_w, self.results_w):
            os.close(fd)
            self._unowned.remove(fd)
        for drain in (self.output, self.results):
            drain.start()
            self._unowned.remove(drain.fd)

    def close(self) -> None:
        for fd in self._unowned:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._unowned.clear()
        remove_tree(self.base)


class Process(Protocol):
    """A worker process as `supervise` sees it: a Popen, or a fork server's child."""

    pid: int

    @property
    def ended(self) -> bool:
        """It ended and was reaped (by the tutor, or by its server)."""

    @property
    def returncode(self) -> int | None:
        """How it ended (negative: killed by that signal); None while running, or unknown."""

    def wait_for(self, seconds: float) -> bool:
        """Wait up to `seconds` for it to end; whether it has."""

    @property
    def memory_capped(self) -> bool:
        """The tutor capped the memory learner code may add (a Windows job), at `learner_starts`."""

    def learner_starts(self, memory_bytes: int) -> None:
        """Learner code starts now: cap the memory it may add, where the tutor is the one
        to do it (a Windows job; on Linux the worker lowers its own RLIMIT_AS)."""

    def kill(self) -> None:
        """SIGKILL its whole process group (its job, on Windows), itself included; once it
        has ended, whatever is left of its job."""

    def wait(self) -> None:
        """After `kill`: wait until it has ended (bounded; the status may stay unknown)."""


class Tree(Protocol):
    """What holds a worker and everything it starts, where processes can leave their group
    (a `winjob.Job`): kill them all, cap their memory, let go of them (killing them too)."""

    def cap_memory_above_now(self, budget: int) -> None: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...


# How a just-started worker is put in a Tree: `contain_in_job` (Windows), or a test's fake.
Contain = Callable[[subprocess.Popen[bytes]], "Tree | None"]


def contain_in_job(proc: subprocess.Popen[bytes]) -> Tree | None:
    """Windows: `proc` in a new kill-on-close Job Object. None elsewhere, or if Windows refuses
    (the tree is then killed by `taskkill /T`, as before jobs)."""
    if sys.platform != "win32":
        return None
    from gradtutor.checking import winjob  # pragma: no cover - Windows

    try:  # pragma: no cover - Windows
        return winjob.contain(int(proc._handle))  # type: ignore[attr-defined,unused-ignore]
    except Exception:  # noqa: BLE001 # pragma: no cover - a job is a bonus; taskkill /T remains
        return None


class Spawned:
    """A worker started with Popen (a cold one, or a pre-started one), and the Tree holding it
    and what it starts, if there is one. `release` lets go of the Tree once all is over."""

    def __init__(self, proc: subprocess.Popen[bytes], tree: Tree | None = None) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.tree = tree
        self.memory_capped = False

    @property
    def ended(self) -> bool:
        return self.proc.returncode is not None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def wait_for(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def learner_starts(self, memory_bytes: int) -> None:
        if self.tree is None:
            return
        try:  # relative to what is committed now: torch, the checker and its references
            self.tree.cap_memory_above_now(memory_bytes)
        except OSError:
            return  # uncapped, and the verdict will not claim a limit
        self.memory_capped = True

    def kill(self) -> None:
        if self.tree is not None:
            self.tree.kill()  # the worker and all it started, a detached grandchild included
        if self.proc.poll() is None:
            _kill_group(self.proc, tree_killed=self.tree is not None)

    def wait(self) -> None:
        self.proc.wait()

    def release(self) -> None:
        """Close the Tree (which kills what is left in it). After the sweep; idempotent."""
        tree, self.tree = self.tree, None
        if tree is not None:
            with contextlib.suppress(OSError):
                tree.close()


def run_worker(request: protocol.Request, timeout: float, *,
               contain: Contain = contain_in_job) -> tuple[WorkerRun, Seen]:
    """Run one request in a fresh cold worker and return what happened, leaving nothing
    behind: no process, no temporary file, even if the tutor itself is interrupted meanwhile.
    `contain` puts the worker in a Tree (a Job Object on Windows)."""
    slot = Slot()
    worker: Spawned | None = None
    try:
        slot.write_request(request)
        before = tutor_descendants()
        worker, go = spawn_worker(slot, tied=True, contain=contain)
        started = time.monotonic()
        send_go(go)  # at once: the worker reads it as soon as torch is imported
        slot.handed_over()
        return supervise(slot, worker, request, timeout, before, started)
    finally:
        if worker is not None:
            worker.release()  # before the folder goes: Windows keeps a running process's cwd
        slot.close()


def supervise(slot: Slot, process: Process, request: protocol.Request, timeout: float,
              before: set[int], started: float) -> tuple[WorkerRun, Seen]:
    """Watch a worker that has its request (sent at `started`): its clock, the kill at the
    deadline, then the sweep of whatever it left running (processes not in `before`), and
    what it sent. The sweep runs even if the tutor is interrupted meanwhile."""
    slot.results.when_first_line(lambda: process.learner_starts(request["memory_bytes"]))
    try:
        timed_out, startup_timed_out = _wait(process, slot.results, timeout, started)
    finally:
        interrupted = not process.ended  # the tutor was interrupted
        process.kill()  # what is left: the worker if interrupted, and its job (Windows)
        if interrupted:
            process.wait()
        stopped = forget_worker(process.pid)
        kill_leftovers(process.pid, before, str(slot.base))
    return collect(slot, request, process.returncode, timed_out, startup_timed_out, started,
                   memory_capped=LINUX or process.memory_capped, stopped=stopped)


def collect(slot: Slot, request: protocol.Request, returncode: int | None, timed_out: bool,
            startup_timed_out: bool, started: float, *, memory_capped: bool = LINUX,
            stopped: bool = False) -> tuple[WorkerRun, Seen]:
    """What the drains kept, once the worker and everything it started are dead.
    `memory_capped`: the memory budget was enforced (RLIMIT_AS on Linux, a job on Windows),
    so a verdict may name it; `stopped`: the tutor ended the run because it was closing."""
    for drain in (slot.output, slot.results):
        drain.join(timeout=2.0)  # EOF once every holder of the pipe is dead
    run = WorkerRun(bytes(slot.results.kept), slot.results.dropped > 0, returncode,
                    timed_out, startup_timed_out,
                    request["memory_bytes"] if memory_capped else None,
                    request["file_bytes"] if os.name == "posix" else None)
    startup_ms = (round((slot.results.first_line_at - started) * 1000)
                  if slot.results.first_line.is_set() else None)
    text = bytes(slot.output.kept).decode("utf-8", errors="replace").replace("\r\n", "\n")
    return run, Seen(text, slot.output.dropped, startup_ms, stopped)


def spawn_worker(slot: Slot, *, preload: bool = False, tied: bool = False,
                 contain: Contain = contain_in_job) -> tuple[Spawned, int]:
    """Start a worker for `slot`: its own session (no terminal, no Ctrl+C from the tutor's
    terminal), stdin empty, output to the slot's output pipe, results to its result pipe and
    nowhere else, the slot's folder as its mark, and (Windows) in a job, by `contain`. It
    imports torch, then waits for `go` on a pipe: the returned fd, which the caller hands to
    `send_go` (at once for a cold check, later for a pre-started worker). The caller
    `release`s the worker once it is over. `tied`: the worker dies with the tutor (Linux's
    parent-death signal, which fires when the thread that started it ends, so only for a
    worker whose starting thread waits for it)."""
    go_r, go_w = os.pipe()
    try:
        kwargs, passed = _inheriting([go_r, slot.results_w])
        argv = [sys.executable, "-m", "gradtutor.checking.worker", str(slot.request_path),
                *passed, *(["--preload"] if preload else []),
                *([f"--die-with={os.getpid()}"] if tied else [])]
        env = worker_environment(os.environ, mark=str(slot.base))
        proc = start_registered(lambda: subprocess.Popen(
            argv, cwd=slot.work, stdin=subprocess.DEVNULL, stdout=slot.output_w,
            stderr=slot.output_w, env=env, **kwargs))
        # no learner code runs before `go`, so nothing can start outside the job meanwhile
        worker = Spawned(proc, contain(proc))
        register_worker(proc.pid, worker.kill)
    except BaseException:
        os.close(go_w)
        raise
    finally:
        os.close(go_r)
    return worker, go_w


def send_go(fd: int) -> None:
    """Tell a worker waiting on the pipe `fd` to read its request, and close the pipe. The
    message is far below the pipe's buffer, so this never blocks."""
    with contextlib.suppress(OSError):  # it died already: supervising it will say how
        os.write(fd, b"go\n")
    os.close(fd)


def _inheriting(fds: list[int]) -> tuple[dict[str, Any], list[str]]:
    """Popen arguments that give the child exactly `fds` (and its standard streams), and how
    to name them on its command line: fd numbers, or handles on Windows."""
    if sys.platform == "win32":  # pragma: no cover - exercised by CI on Windows
        import msvcrt

        handles = [msvcrt.get_osfhandle(fd) for fd in fds]
        for handle in handles:
            os.set_handle_inheritable(handle, True)
        return ({"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP,
                 "startupinfo": subprocess.STARTUPINFO(
                     lpAttributeList={"handle_list": handles})},
                [str(h) for h in handles])
    return {"pass_fds": tuple(fds), "start_new_session": True}, [str(fd) for fd in fds]


def _wait(process: Process, results: _Drain, timeout: float,
          started: float) -> tuple[bool, bool]:
    """Wait for the worker to end; kill it at the deadline. The learner's clock starts when
    the worker sends its first message, just before it loads the learner's file; until then
    it has STARTUP_ALLOWANCE from `started`, when it got its request.

    Returns (the learner's time ran out, the worker never got as far as learner code)."""
    deadline = started + STARTUP_ALLOWANCE
    clock_started = False
    while True:
        if not clock_started and results.first_line.is_set():
            clock_started = True
            deadline = results.first_line_at + timeout
        if results.complete.is_set():
            deadline = min(deadline, results.complete_at + EXIT_GRACE)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            process.kill()
            process.wait()
            complete = results.complete.is_set()
            return clock_started and not complete, not clock_started
        if process.wait_for(min(remaining, 0.05)):
            return False, False


def _kill_group(proc: subprocess.Popen[bytes], *, tree_killed: bool = False) -> None:
    """SIGKILL the worker's process group (it leads its own session); on Windows the worker,
    and its tree by `taskkill /T` unless its job was killed already."""
    if sys.platform == "win32":  # pragma: no cover
        if not tree_killed:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        proc.kill()
    else:
        kill_group(proc.pid)


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (POSIX); quietly, if it is gone already."""
    if os.name != "posix":  # pragma: no cover - Windows has no process groups to signal
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# The workers running right now, across threads, each with how to kill it. Process-wide
# because a process's children are: the sweep after one check must spare the workers (and
# what runs below them) of checks still running beside it, so run_check can be called from
# several threads at once; and closing the tutor must end them all (`stop_workers`).
_workers_lock = threading.Lock()
_live_workers: dict[int, Callable[[], None]] = {}
_stopped_workers: set[int] = set()  # ended by `stop_workers`; `forget_worker` tells


def start_registered(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """Start a worker (or fork server) with `start` and register it as live, with no sweep in
    between; the tutor becomes a subreaper first (Linux)."""
    become_subreaper()
    sweep_abandoned()  # once: what a killed tutor left, before this one starts its own
    guard_memory()
    with _workers_lock:
        proc = start()
        _live_workers[proc.pid] = functools.partial(kill_group, proc.pid)
    return proc


def register_worker(pid: int, kill: Callable[[], None] | None = None) -> None:
    """Spare `pid` and what runs below it from every sweep until `forget_worker`; `kill`
    (default: SIGKILL its process group) is how `stop_workers` ends it."""
    with _workers_lock:
        _live_workers[pid] = kill or functools.partial(kill_group, pid)


def forget_worker(pid: int) -> bool:
    """`pid` has ended: stop sparing it. Whether `stop_workers` had ended it."""
    with _workers_lock:
        _live_workers.pop(pid, None)
        stopped = pid in _stopped_workers
        _stopped_workers.discard(pid)
    return stopped


def stop_workers(pids: Iterable[int] | None = None) -> None:
    """End the checks running now (all of them, or those of the workers `pids`): the tutor is
    closing. Each such check ends as `stopped_check`, not as a crash of the learner's code."""
    with _workers_lock:  # held while killing: a worker forgotten meanwhile has its job closed
        for pid in list(_live_workers) if pids is None else pids:
            kill = _live_workers.get(pid)
            if kill is not None:
                _stopped_workers.add(pid)
                kill()


@functools.cache
def become_subreaper() -> None:
    """Linux: orphans of the tutor's descendants re-parent to the tutor instead of init,
    so a learner's detached process stays findable. Once per process; harmless if it fails."""
    if not LINUX:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


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
    line = _read(f"/proc/{pid}/stat")
    fields = line[line.rfind(b")") + 2:].split() if line else []  # the name may hold spaces
    return (int(fields[1]), fields[0].decode("ascii", "replace")) if len(fields) >= 2 else None


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


def kill_leftovers(worker: int, before: set[int], marker: str, rounds: int = 400) -> None:
    """Kill and reap whatever the check left running: the worker's process group, then (on
    Linux) every process below the tutor that did not exist before the check and is not
    another check's worker, round after round until none is left. Elsewhere on POSIX, where
    orphans go to init, they are found by `marker` (the check's folder) in their command line
    or environment, which keeps it through fork and exec. On Windows the worker's job (or
    `taskkill /T`) took them when the worker was killed."""
    if sys.platform == "win32":  # pragma: no cover
        return
    kill_group(worker)
    sweep_leftovers(before, marker, rounds)


def sweep_leftovers(before: set[int], marker: str, rounds: int = 400) -> None:
    """The second half of `kill_leftovers`: what is left once the worker's group is dead."""
    if sys.platform == "win32":  # pragma: no cover
        return
    if not LINUX:  # pragma: no cover - macOS; the same sweep is tested on Linux
        for _ in range(3):
            if not sweep_by_marker(marker):
                return
            time.sleep(0.01)
        return
    me = os.getpid()
    for _ in range(rounds):
        with _workers_lock:
            table = process_table()
            doomed = descendants(table, me, before | _live_workers.keys())
            for pid in doomed:
                if table[pid][1] != "Z":
                    _signal(pid, signal.SIGKILL)
            for pid in doomed:
                if table[pid][0] == me:  # only our own children can be reaped by us
                    _reap(pid)
        if not doomed:
            return
        time.sleep(0.005)


# `ps` listing every process as "pid uid command line", the command line followed by the
# environment the process started with: macOS's -E, procps's `e`. A process that exec'd
# another program keeps the check's mark in its environment, not in its command line.
PS_MACOS = ("ps", "-ww", "-E", "-axo", "pid=,uid=,args=")
PS_PROCPS = ("ps", "-ww", "axeo", "pid=,uid=,args=")


def pids_with_marker(listing: str, marker: str, *, uid: int, spared: Iterable[int]) -> set[int]:
    """From a `PS_MACOS` or `PS_PROCPS` listing, the processes of the user `uid` whose command
    line or environment holds `marker`, but for `spared` ones."""
    spare = set(spared)
    found: set[int] = set()
    for line in listing.splitlines():
        fields = line.split(None, 2)
        if len(fields) < 3 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        pid, owner, args = int(fields[0]), int(fields[1]), fields[2]
        if owner == uid and marker in args and pid not in spare:
            found.add(pid)
    return found


def sweep_by_marker(marker: str, ps: tuple[str, ...] = PS_MACOS) -> set[int]:
    """SIGKILL every process of this user whose command line or environment (as listed by
    `ps`) holds `marker`, never the tutor itself or its parent; the pids it found."""
    env = {k: v for k, v in os.environ.items() if k != CHECK_MARK}  # ps must not list itself
    try:
        listing = subprocess.run(list(ps), capture_output=True, text=True, env=env,
                                 errors="replace", timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    doomed = pids_with_marker(listing, marker, uid=os.getuid(),
                              spared={os.getpid(), os.getppid()})
    for pid in doomed:
        _signal(pid, signal.SIGKILL)
    return doomed


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def remove_tree(path: Path) -> None:
    """Delete `path` and everything in it, whatever the learner did to the permissions inside
    (a folder made unreadable or read-only is opened up first; symlinks are never followed)."""
    def unlock(folder: str) -> None:
        try:
            os.chmod(folder, stat.S_IRWXU)
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                unlock(entry.path)
            elif entry.is_file(follow_symlinks=False):  # Windows won't delete read-only files
                with contextlib.suppress(OSError):
                    os.chmod(entry.path, stat.S_IRUSR | stat.S_IWUSR)

    if not path.exists():
        return
    unlock(str(path))
    shutil.rmtree(path, ignore_errors=True)
