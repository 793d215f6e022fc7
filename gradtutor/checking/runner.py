"""Running one check: the learner's file in a worker process, under limits, with a clock.

The tutor's side of the isolation. It reads the file, starts `gradtutor.checking.worker` in a
fresh temporary directory with no stdin, drains the learner's output and the private result
pipe, kills the worker's whole process tree when time is up or the check is over, and hands
what it saw to `outcome.decide` (pure) for the Verdict. This process never runs learner code.

Nothing is left running: on Linux the tutor becomes a child subreaper, so even a learner's
double-forked, `setsid` daemon re-parents to it and is found and killed after the check. On
macOS and Windows only the worker's process group (or tree) is killed: a process that left
it on purpose can outlive the check there.
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradtutor
from gradtutor.checking.checkers import CHECKERS
from gradtutor.checking.checkers import load as load_checker
from gradtutor.checking.outcome import GiB, MiB, WorkerRun, decide, source_problem
from gradtutor.checking.verdict import Verdict, overall
from gradtutor.errors import GradtutorError
from gradtutor.lessons.model import Exercise

MEMORY_BUDGET = 2 * GiB  # address space learner code may add to the worker's (Linux)
FILE_BUDGET = 64 * MiB  # the largest file learner code may write (POSIX)
OUTPUT_CAP = 64 * 1024  # learner output kept, stdout and stderr together
RESULTS_CAP = 8 * MiB  # result-channel bytes accepted
MAX_SOURCE_BYTES = 1 * MiB
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
    started = time.monotonic()
    limit = exercise.timeout if timeout is None else timeout
    if exercise.checker not in CHECKERS:
        raise GradtutorError(f"exercise {exercise.id} names an unknown checker "
                             f"{exercise.checker!r}", "fix the lesson file")
    raw = read_learner_file(path)
    problem = source_problem(raw, str(path), exercise.function, MAX_SOURCE_BYTES)
    if problem is not None:
        return Verdict(exercise.id, "error", (problem,), seed, _ms_since(started))
    request = {"checker": exercise.checker, "function": exercise.function,
               "source": raw.decode("utf-8-sig"), "filename": str(path), "seed": seed,
               "memory_bytes": MEMORY_BUDGET, "file_bytes": FILE_BUDGET}
    run, seen = run_worker(request, limit)
    checks = decide(run, load_checker(exercise.checker).judge, function=exercise.function,
                    timeout=limit, startup_allowance=STARTUP_ALLOWANCE, results_cap=RESULTS_CAP)
    return Verdict(exercise.id, overall(checks), checks, seed, _ms_since(started),
                   output=seen.output, output_truncated=seen.dropped > 0,
                   extra={"startup_ms": seen.startup_ms, "exit_code": run.returncode,
                          "output_dropped_bytes": seen.dropped})


def read_learner_file(path: Path) -> bytes:
    """The learner's file as bytes, read by the tutor (the worker gets this copy)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise GradtutorError(f"there is no file {path}",
                             "write your answer in that file, or name the right one") from None
    except IsADirectoryError:
        raise GradtutorError(f"{path} is a folder, not a Python file",
                             "name the .py file with your answer") from None
    except OSError as exc:
        raise GradtutorError(f"cannot read {path}: {exc.strerror or exc}",
                             "check the file's permissions") from None


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def worker_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The worker's environment: the tutor's, made to import this very gradtutor, with one
    thread per numeric library, UTF-8 output, and the settings in _DROPPED_ENV removed."""
    env = {k: v for k, v in base.items() if k not in _DROPPED_ENV}
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

    def _take(self, chunk: bytes) -> None:
        room = max(0, self.cap - len(self.kept))
        self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - room)
        if self.lines < 2 and b"\n" in chunk:
            self.lines += chunk.count(b"\n")
            now = time.monotonic()
            if not self.first_line.is_set():
                self.first_line_at = now
                self.first_line.set()
            if self.lines >= 2:
                self.complete_at = now
                self.complete.set()


def run_worker(request: dict[str, Any], timeout: float) -> tuple[WorkerRun, Seen]:
    """Run one request in a fresh worker and return what happened, leaving nothing behind:
    no process, no temporary file, even if the tutor itself is interrupted meanwhile."""
    base = Path(tempfile.mkdtemp(prefix="gradtutor-check-"))
    work = base / "work"
    work.mkdir()
    output_r, output_w = os.pipe()
    results_r, results_w = os.pipe()
    unowned = [output_r, output_w, results_r, results_w]  # fds no drain has taken over yet
    proc: subprocess.Popen[bytes] | None = None
    before = _tutor_descendants()
    try:
        proc = _spawn(request, base, work, output_w, results_w)
        for fd in (output_w, results_w):  # the worker has its copies; EOF needs ours closed
            os.close(fd)
            unowned.remove(fd)
        output, results = _Drain(output_r, OUTPUT_CAP), _Drain(results_r, RESULTS_CAP)
        for drain in (output, results):
            drain.start()
            unowned.remove(drain.fd)
        spawned = time.monotonic()
        timed_out, startup_timed_out = _wait(proc, results, timeout)
        _forget_worker(proc.pid)
        _kill_leftovers(proc.pid, before, str(base))
        for drain in (output, results):
            drain.join(timeout=2.0)  # EOF once every holder of the pipe is dead
        run = WorkerRun(bytes(results.kept), results.dropped > 0, proc.returncode, timed_out,
                        startup_timed_out, request["memory_bytes"] if LINUX else None,
                        request["file_bytes"] if os.name == "posix" else None)
        startup_ms = (round((results.first_line_at - spawned) * 1000)
                      if results.first_line.is_set() else None)
        text = bytes(output.kept).decode("utf-8", errors="replace").replace("\r\n", "\n")
        return run, Seen(text, output.dropped, startup_ms)
    finally:
        if proc is not None and proc.returncode is None:  # the tutor was interrupted
            _kill_group(proc)
            proc.wait()
            _forget_worker(proc.pid)
            _kill_leftovers(proc.pid, before, str(base))
        for fd in unowned:
            os.close(fd)
        remove_tree(base)


def _spawn(request: dict[str, Any], base: Path, work: Path, output_fd: int,
           write_fd: int) -> subprocess.Popen[bytes]:
    """Start the worker: its own session (no terminal, no Ctrl+C from the tutor's terminal),
    stdin empty, output to one pipe, results to the pipe `write_fd` and nowhere else."""
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":  # pragma: no cover - exercised by CI on Windows
        import msvcrt

        handle = msvcrt.get_osfhandle(write_fd)
        os.set_handle_inheritable(handle, True)
        request = {**request, "result_handle": handle}
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        kwargs["startupinfo"] = subprocess.STARTUPINFO(lpAttributeList={"handle_list": [handle]})
    else:
        request = {**request, "result_fd": write_fd}
        kwargs["pass_fds"] = (write_fd,)
        kwargs["start_new_session"] = True
    request_path = base / "request.json"
    request_path.write_text(json.dumps(request), encoding="utf-8")
    _become_subreaper()
    with _workers_lock:  # no sweep runs between this fork and the worker's registration
        proc = subprocess.Popen(
            [sys.executable, "-m", "gradtutor.checking.worker", str(request_path)],
            cwd=work, stdin=subprocess.DEVNULL, stdout=output_fd, stderr=output_fd,
            env=worker_environment(os.environ), **kwargs)
        _live_workers.add(proc.pid)
    return proc


def _wait(proc: subprocess.Popen[bytes], results: _Drain, timeout: float) -> tuple[bool, bool]:
    """Wait for the worker to end; kill it at the deadline. The learner's clock starts when
    the worker sends its first message, just before it loads the learner's file.

    Returns (the learner's time ran out, the worker never got as far as learner code)."""
    deadline = time.monotonic() + STARTUP_ALLOWANCE
    clock_started = False
    while True:
        if not clock_started and results.first_line.is_set():
            clock_started = True
            deadline = results.first_line_at + timeout
        if results.complete.is_set():
            deadline = min(deadline, results.complete_at + EXIT_GRACE)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            _kill_group(proc)
            proc.wait()
            complete = results.complete.is_set()
            return clock_started and not complete, not clock_started
        try:
            proc.wait(timeout=min(remaining, 0.05))
            return False, False
        except subprocess.TimeoutExpired:
            continue


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker's process group (it leads its own session), or its tree on Windows."""
    if sys.platform == "win32":  # pragma: no cover
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        proc.kill()
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
            os.killpg(proc.pid, signal.SIGKILL)


# The workers running right now, across threads. Process-wide because a process's children
# are: the sweep after one check must spare the workers (and what runs below them) of checks
# still running beside it, so run_check can be called from several threads at once.
_workers_lock = threading.Lock()
_live_workers: set[int] = set()


def _forget_worker(pid: int) -> None:
    with _workers_lock:
        _live_workers.discard(pid)


@functools.cache
def _become_subreaper() -> None:
    """Linux: orphans of the tutor's descendants re-parent to the tutor instead of init,
    so a learner's detached process stays findable. Once per process; harmless if it fails."""
    if not LINUX:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def process_table() -> dict[int, tuple[int, str]]:
    """Every process on this Linux system: pid -> (parent pid, state letter)."""
    table: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat_line = file.read()
        except OSError:
            continue  # it ended while we looked
        fields = stat_line[stat_line.rfind(b")") + 2:].split()  # the name may hold spaces
        if len(fields) >= 2:
            table[int(name)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return table


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


def _tutor_descendants() -> set[int]:
    return descendants(process_table(), os.getpid()) if LINUX else set()


def _kill_leftovers(worker: int, before: set[int], marker: str, rounds: int = 400) -> None:
    """Kill and reap whatever the check left running: the worker's process group, then (on
    Linux) every process below the tutor that did not exist before the check and is not
    another check's worker, round after round until none is left. Elsewhere on POSIX, where
    orphans go to init, forked copies of the worker are found by `marker` in their command
    line (a fork keeps it; only a process that exec'd something else escapes)."""
    if sys.platform == "win32":  # pragma: no cover - taskkill /T took the tree if it ran
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(worker, signal.SIGKILL)
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
            doomed = descendants(table, me, before | _live_workers)
            for pid in doomed:
                if table[pid][1] != "Z":
                    _signal(pid, signal.SIGKILL)
            for pid in doomed:
                if table[pid][0] == me:  # only our own children can be reaped by us
                    _reap(pid)
        if not doomed:
            return
        time.sleep(0.005)


def pids_with_marker(listing: str, marker: str, me: int) -> set[int]:
    """From `ps -ww -axo pid=,args=` output, the pids whose command line holds `marker`."""
    found: set[int] = set()
    for line in listing.splitlines():
        pid_text, _, args = line.strip().partition(" ")
        if pid_text.isdigit() and marker in args and int(pid_text) != me:
            found.add(int(pid_text))
    return found


def sweep_by_marker(marker: str) -> set[int]:
    """SIGKILL every process whose command line holds `marker`; the pids it found."""
    try:
        listing = subprocess.run(["ps", "-ww", "-axo", "pid=,args="], capture_output=True,
                                 text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    doomed = pids_with_marker(listing, marker, os.getpid())
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
