"""Running one check (or lesson snippet): the learner's code in a worker process, under
limits, with a clock.

The tutor's side of the isolation. It reads the file, prepares a `Slot` (a fresh temporary
folder, no stdin, an output pipe and a private result pipe), starts `gradtutor.checking.worker`
there, drains both pipes, kills the worker's whole process tree when time is up or the check
is over and sweeps what it left (`supervise`, with lifetime.py's `Workers`), and hands what it
saw to `outcome.decide` (pure) for the Verdict. This process never runs learner code.

Requests run on an `Engine`: `ColdEngine` starts a fresh worker that imports torch first
(`WaitingWorker`, answered at once); warm.py's engines run the same requests through the same
`Slot` and `supervise` in a worker that has torch already. docs/isolation.md has the whole
picture.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gradtutor.checking import protocol
from gradtutor.checking.channel import LineReader
from gradtutor.checking.checkers import CHECKERS, judge_of, request_checker
from gradtutor.checking.lifetime import (
    Workers,
    cleanup_before_termination,
    kill_group,
    owned_prefix,
    remove_tree,
    tutor_descendants,
)
from gradtutor.checking.mistakes import name_known_mistake
from gradtutor.checking.outcome import GiB, MiB, WorkerRun, decide, source_problem
from gradtutor.checking.snippet import SnippetResult, snippet_result
from gradtutor.checking.spawn import (
    WORKER,
    inheriting,
    start,
    start_reference,
    tutor_environ,
    worker_environment,
)
from gradtutor.checking.verdict import Check, Verdict, overall
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

def run_check(exercise: Exercise, path: Path, *, seed: int, timeout: float | None = None,
              engine: Engine | None = None) -> Verdict:
    """Check the learner's file `path` against `exercise`'s checker, on inputs from `seed`,
    on `engine` (default: a cold worker of its own).

    `timeout` (default: the exercise's) is the time the learner's code may run; the worker's
    start-up (importing torch, computing references) is not counted. A missing or unreadable
    file raises GradtutorError; every other problem, down to a crash, is a failed Verdict.
    Checks run from several threads at once share one engine (or one `Workers`)."""
    run = (engine if engine is not None else ColdEngine()).run
    return check_with(run, exercise, path, seed=seed, timeout=timeout)


def check_with(run: RunWorker, exercise: Exercise, path: Path, *, seed: int,
               timeout: float | None) -> Verdict:
    """`run_check`, with the worker run by `run` (a cold worker, or a warm one)."""
    started = time.monotonic()
    limit = exercise.timeout if timeout is None else timeout
    if not exercise.declared and exercise.checker not in CHECKERS:
        raise GradtutorError(msg("exercise {exercise} names an unknown checker '{checker}'",
                                 exercise=exercise.id, checker=exercise.checker),
                             msg("`gradtutor validate` lists what is wrong with the lesson"))
    try:
        raw = read_learner_file(path)
    except FileTooLarge as exc:  # judged unread, as any file too large to check
        raw, size = b"", exc.size
    else:
        size = len(raw)
    problem = source_problem(raw, str(path), exercise.function, MAX_SOURCE_BYTES, size=size)
    if problem is not None:
        return Verdict(exercise.id, "error", (problem,), seed, _ms_since(started))
    source = raw.decode("utf-8-sig")
    request = protocol.check_request(
        checker=request_checker(exercise), function=exercise.function, source=source,
        filename=str(path), seed=seed, memory_bytes=MEMORY_BUDGET, file_bytes=FILE_BUDGET)
    with cleanup_before_termination():
        worker_run, seen = run(request, limit)
    checks = (stopped_check(exercise.id),) if seen.stopped else name_known_mistake(
        exercise, source, decide(
            worker_run, judge_of(exercise), function=exercise.function, timeout=limit,
            startup_allowance=STARTUP_ALLOWANCE, results_cap=RESULTS_CAP))
    return Verdict(exercise.id, overall(checks), checks, seed, _ms_since(started),
                   output=seen.output, output_truncated=seen.dropped > 0,
                   extra={"startup_ms": seen.startup_ms, "exit_code": worker_run.returncode,
                          "output_dropped_bytes": seen.dropped})


def run_snippet(code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                timeout: float = 20.0, engine: Engine | None = None) -> SnippetResult:
    """Run a lesson's snippet (a predict or demo step) on `engine` (default: a cold worker of
    its own), isolated and timed like a check; `show` is an expression whose str() is wanted
    afterwards, `series` the variables wanted as numbers."""
    run = (engine if engine is not None else ColdEngine()).run
    return snippet_with(run, code, show=show, series=series, timeout=timeout)


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


def reference_alone(request: protocol.CheckRequest, timeout: float = STARTUP_ALLOWANCE,
                    environ: Mapping[str, str] | None = None) -> protocol.Expected | None:
    """A check's references from a fresh process of their own (`worker --reference`), for
    when the process meant to compute them beside the check died with the check already run:
    learner code is never run a second time to get them. None if they cannot be had."""
    read, write = os.pipe()
    try:
        proc = start_reference(request["checker"], request["seed"], write,
                               worker_environment(tutor_environ(environ)))
    except OSError:
        os.close(read)
        return None
    finally:
        os.close(write)
    try:
        line = LineReader(read).next(timeout)
        return protocol.decode_reference(line) if line is not None else None
    except protocol.Malformed:
        return None
    finally:
        os.close(read)
        proc.kill()
        proc.wait()


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


@dataclass(frozen=True)
class Seen:
    """What the tutor kept of a run besides the results: the output and when things began."""

    output: str
    dropped: int
    startup_ms: int | None
    stopped: bool = False  # the tutor ended the run because it was closing (`Workers.stop`)


Outcome = tuple[WorkerRun, Seen]  # all the tutor saw of one run
# How a request is run: `Engine.run`, or a stand-in.
RunWorker = Callable[[protocol.Request, float], Outcome]


class Engine(Protocol):
    """Where requests run: a fresh cold worker each (`ColdEngine`), or a worker that has
    imported torch already (warm.py: children of a fork server, or pre-started workers).

    `run` may be called from any thread; it sweeps what the run left and spares what the
    engine's other runs (and the other engines of its `Workers`) still run. `close` ends what
    it runs now (each such run ends as stopped) and what it keeps waiting, and refuses later
    runs. `start` begins readying a warm worker in the background; `wait_ready` waits for it
    (whether one is ready); `loading` says at once whether a request now would wait for it;
    `pid` is its process, if one is running."""

    @property
    def pid(self) -> int | None: ...

    def start(self) -> None: ...

    def wait_ready(self) -> bool: ...

    def loading(self) -> bool: ...

    def run(self, request: protocol.Request, timeout: float) -> Outcome: ...

    def close(self) -> None: ...


def refuse_if(closed: bool) -> None:
    """After an engine's `close`, no new worker starts: the program may be ending, and a
    worker started now could outlive it with nobody left to stop it."""
    if closed:
        raise GradtutorError(msg("the checker was closed before this check could run"),
                             msg("this is a gradtutor bug: check before closing it"))


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

    @property
    def learner_started(self) -> bool:
        """The worker's first message came: learner code was about to start."""
        return self.results.first_line.is_set()

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
               contain: Contain = contain_in_job, workers: Workers | None = None,
               environ: Mapping[str, str] | None = None) -> Outcome:
    """Run one request in a fresh cold worker (`ColdEngine`) and return what happened, leaving
    nothing behind: no process, no temporary file, even if the tutor itself is interrupted
    meanwhile. `contain` puts the worker in a Tree (a Job Object on Windows)."""
    return ColdEngine(workers, contain=contain, environ=environ).run(request, timeout)


class ColdEngine:
    """The `Engine` that starts a fresh worker for every request, which imports torch first:
    seconds a check, but nothing is kept running between checks. Runs may come from several
    threads at once; `close` ends those running. `environ`: the tutor's environment, which
    its workers' is made from."""

    def __init__(self, workers: Workers | None = None, *,
                 contain: Contain = contain_in_job,
                 environ: Mapping[str, str] | None = None) -> None:
        self.workers = workers if workers is not None else Workers()
        self._contain = contain
        self._environ = tutor_environ(environ)
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._closed = False

    @property
    def pid(self) -> int | None:
        return None  # nothing waits between requests

    def start(self) -> None:
        pass

    def wait_ready(self) -> bool:
        return True

    def loading(self) -> bool:
        return False  # each request imports torch in its own worker: none waits for another

    def run(self, request: protocol.Request, timeout: float) -> Outcome:
        with self._lock:
            refuse_if(self._closed)
        worker = WaitingWorker(self.workers, tied=True, contain=self._contain,
                               environ=self._environ)
        try:
            with self._lock:
                self._running.add(worker.pid)
                closed = self._closed
            if closed:  # closed while it started: it ends at once, as stopped
                self.workers.stop([worker.pid])
            outcome, _ = worker.answer(request, timeout)
            return outcome
        finally:
            with self._lock:
                self._running.discard(worker.pid)
            worker.discard()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            running = list(self._running)
        self.workers.stop(running)


class WaitingWorker:
    """A spawned worker and its `Slot`: it imports torch, then waits for `go`. A cold check
    answers it at once; a pre-started one (warm.py) later. One request each; `discard` once
    it is over (or never used) leaves nothing of it behind. `tied`: it dies with the tutor
    (Linux's parent-death signal, which fires when the thread that started it ends, so only
    for a worker whose starting thread waits for it)."""

    def __init__(self, workers: Workers, *, preload: bool = False, tied: bool = False,
                 contain: Contain = contain_in_job,
                 environ: Mapping[str, str] | None = None) -> None:
        self._workers = workers
        self.slot = Slot()
        try:
            self._spawned, self._go = _spawn_worker(
                self.slot, workers, tutor_environ(environ), preload=preload, tied=tied,
                contain=contain)
        except BaseException:
            self.slot.close()
            raise
        self.pid = self._spawned.pid
        self.slot.handed_over()

    def alive(self) -> bool:
        return self._spawned.proc.poll() is None

    def answer(self, request: protocol.Request, timeout: float) -> tuple[Outcome, bool]:
        """The run; and whether it may be retried (the worker died before it said a word,
        so before any learner code ran: killed while it waited, say)."""
        self.slot.write_request(request)
        before = tutor_descendants() - {self.pid}
        started = time.monotonic()
        _send_go(self._go)
        self._go = -1
        outcome = supervise(self.slot, self._spawned, request, timeout, before=before,
                            started=started, workers=self._workers)
        return outcome, not self.slot.learner_started

    def wait(self, seconds: float) -> None:
        """Wait (up to `seconds`) until it has ended and is reaped."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._spawned.proc.wait(seconds)

    def discard(self) -> None:
        """End it (if it still waits) and whatever it started, and remove its slot.
        Idempotent."""
        if self._go >= 0:
            os.close(self._go)
            self._go = -1
        self._spawned.kill()
        self._spawned.proc.wait()
        self._workers.forget(self.pid)
        self._spawned.release()  # before the folder goes: Windows keeps a running process's cwd
        for drain in (self.slot.output, self.slot.results):
            if drain.is_alive():
                drain.join(timeout=2.0)
        self.slot.close()


def supervise(slot: Slot, process: Process | None, request: protocol.Request, timeout: float,
              *, before: set[int], started: float, workers: Workers) -> Outcome:
    """Watch a worker that has its request (sent at `started`): its clock, the kill at the
    deadline, then the sweep of whatever it left running (processes not in `before`, nor
    another of `workers`), and what it sent. The sweep runs even if the tutor is interrupted
    meanwhile. `process` None: the worker never said it had the request (a fork server that
    died first); whatever may have started is swept all the same, and nothing it did is kept."""
    if process is None:
        workers.sweep(before, str(slot.base))
        return _collect(slot, request, None, False, False, started)
    slot.results.when_first_line(lambda: process.learner_starts(request["memory_bytes"]))
    try:
        timed_out, startup_timed_out = _wait(process, slot.results, timeout, started)
    finally:
        interrupted = not process.ended  # the tutor was interrupted
        process.kill()  # what is left: the worker if interrupted, and its job (Windows)
        if interrupted:
            process.wait()
        stopped = workers.forget(process.pid)
        workers.sweep(before, str(slot.base), group=process.pid)
    return _collect(slot, request, process.returncode, timed_out, startup_timed_out, started,
                    memory_capped=LINUX or process.memory_capped, stopped=stopped)


def _collect(slot: Slot, request: protocol.Request, returncode: int | None, timed_out: bool,
             startup_timed_out: bool, started: float, *, memory_capped: bool = LINUX,
             stopped: bool = False) -> Outcome:
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


def _spawn_worker(slot: Slot, workers: Workers, environ: Mapping[str, str], *, preload: bool,
                  tied: bool, contain: Contain) -> tuple[Spawned, int]:
    """Start a worker for `slot`: its own session (no terminal, no Ctrl+C from the tutor's
    terminal), stdin empty, output to the slot's output pipe, results to its result pipe and
    nowhere else, the slot's folder as its mark, and (Windows) in a job, by `contain`. It
    imports torch, then waits for `go` on a pipe: the returned fd, for `_send_go`."""
    go_r, go_w = os.pipe()
    try:
        kwargs, passed = inheriting([go_r, slot.results_w])
        args = [str(slot.request_path), *passed, *(["--preload"] if preload else []),
                *([f"--die-with={os.getpid()}"] if tied else [])]
        proc = start(WORKER, args, env=worker_environment(environ, mark=str(slot.base)),
                     cwd=slot.work, stdout=slot.output_w, stderr=slot.output_w, popen=kwargs,
                     starter=workers.start)
        # no learner code runs before `go`, so nothing can start outside the job meanwhile
        worker = Spawned(proc, contain(proc))
        workers.register(proc.pid, worker.kill)
    except BaseException:
        os.close(go_w)
        raise
    finally:
        os.close(go_r)
    return worker, go_w


def _send_go(fd: int) -> None:
    """Tell a worker waiting on the pipe `fd` to read its request, and close the pipe. The
    message is far below the pipe's buffer, so this never blocks."""
    with contextlib.suppress(OSError):  # it died already: supervising it will say how
        os.write(fd, protocol.GO)
    os.close(fd)


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
