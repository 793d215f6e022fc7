"""Fast checks: a worker that has already imported torch, so a check costs milliseconds.

On Linux a fork server (`worker.serve`) imports torch and the checkers once, then forks one
fresh child per check; elsewhere a spawned worker is pre-started, imports torch, and waits on
a pipe for its one request, and the next one is pre-started after it is used. Either way each
check runs in a fresh process with the same isolation as a cold check: `runner.Slot` (fresh
folder and pipes), `runner.supervise` (the clock, the kill of the group, the sweep) and
`outcome.decide` (the verdict), so warm and cold verdicts agree. The tutor never imports torch.

A server that dies is noticed (end of file on its socket, or its process gone) and replaced;
a check it took with it is retried when no learner code had run yet, and otherwise judged on
what the child itself reported, which the tutor reaps as the subreaper of its orphans.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from gradtutor.checking import protocol
from gradtutor.checking.outcome import WorkerRun
from gradtutor.checking.runner import (
    LINUX,
    STARTUP_ALLOWANCE,
    Contain,
    Seen,
    Slot,
    check_with,
    children_of,
    collect,
    contain_in_job,
    forget_worker,
    kill_group,
    process_stat,
    register_worker,
    run_worker,
    send_go,
    snippet_with,
    spawn_worker,
    start_registered,
    stop_workers,
    supervise,
    sweep_leftovers,
    tutor_descendants,
    worker_environment,
)
from gradtutor.checking.snippet import SnippetResult
from gradtutor.checking.verdict import Verdict
from gradtutor.checking.worker import TUNED_MARK
from gradtutor.errors import GradtutorError
from gradtutor.lessons.model import Exercise

FORK_SERVER = (LINUX and hasattr(os, "fork") and hasattr(socket, "send_fds")
               and hasattr(socket, "SOCK_SEQPACKET"))
REPLY_WAIT = 10.0  # seconds a server may take to say it forked
KILL_WAIT = 2.0  # seconds to wait for a killed child to be reported, before giving up on it
KNOWN_REFERENCES = 64  # (checker, seed) pairs whose references a fork engine keeps

Outcome = tuple[WorkerRun, Seen]


def warm_enabled(environ: Mapping[str, str]) -> bool:
    """Whether checks should use a warm worker: yes, unless GRADTUTOR_WARM is 0 (or false,
    no, off), which makes every check cold, for comparison and as a way out."""
    return environ.get("GRADTUTOR_WARM", "1").strip().lower() not in ("0", "false", "no", "off")


class WarmWorker:
    """Checks and snippets in a worker that has already imported torch.

    `start()` begins the (slow) start in the background; `check` and `run_snippet` wait for it
    if need be, or run cold if it cannot start. They may be called from any thread, one at a
    time. `close()` (or leaving the `with` block, or the end of the program) kills the worker
    and anything below it. The worker's environment is the tutor's as it was at `start()`.
    `fork` picks the fork server (True) or a pre-started spawned worker (False); the default
    is the fork server where it works (Linux). `contain` puts each spawned worker in a job
    (Windows; a fake in tests). `twin_of`: the first fork server is forked from that worker's
    (once it is ready, between two of its checks), so that several workers import torch once
    and share its memory; where that cannot be, it starts its own. `warm_up` off: the child
    forked ahead for the next check does not run a training step first, which checks back to
    back (`grade`) would wait for; a clone has its first server's setting."""

    def __init__(self, *, fork: bool | None = None, contain: Contain = contain_in_job,
                 twin_of: WarmWorker | None = None, warm_up: bool = True) -> None:
        use_fork = FORK_SERVER if fork is None else fork and FORK_SERVER
        first = twin_of._clone_server if twin_of is not None else None
        self._engine: _ForkEngine | _PrestartEngine = (
            _ForkEngine(first, warm_up) if use_fork else _PrestartEngine(contain))
        self._lock = threading.Lock()  # one check at a time
        # the safety net: the engine is closed when this object goes, or at exit at the latest
        self._finalizer = weakref.finalize(self, self._engine.close)

    def start(self) -> None:
        """Start the worker in the background; returns at once. Idempotent."""
        self._engine.start()

    def wait_ready(self) -> bool:
        """Wait until the worker can take a check at once (it started, if need be, and its
        server is ready, or its pre-started worker waits); whether it can."""
        return self._engine.wait_ready()

    def _clone_server(self) -> _Server | None:
        """For a `twin_of` this worker: a clone of its fork server, made between two checks
        once the server is ready (the twin's start waits for that)."""
        if not isinstance(self._engine, _ForkEngine):
            return None
        with self._lock:
            return self._engine.clone_server()

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
        """`runner.run_check`, in a fresh child of the warm worker."""
        with self._lock:
            return check_with(self._engine.run, exercise, path, seed=seed, timeout=timeout)

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult:
        """`runner.run_snippet`, in a fresh child of the warm worker."""
        with self._lock:
            return snippet_with(self._engine.run, code, show=show, series=series,
                                timeout=timeout)

    def close(self) -> None:
        """Kill the worker and any check running in it, which ends as stopped because the
        tutor was closing. Idempotent. A check or snippet asked for afterwards raises
        GradtutorError rather than start a process."""
        self._finalizer()

    @property
    def pid(self) -> int | None:
        """The fork server's (or the waiting pre-started worker's) process id, if running."""
        return self._engine.pid

    def __enter__(self) -> WarmWorker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_if(closed: bool) -> None:
    """After close(), no new worker starts: the program may be ending, and a worker started
    now could outlive it with nobody left to stop it."""
    if closed:
        raise GradtutorError("the warm checker was closed before this check could run",
                             "this is a gradtutor bug: check before closing it")


# ---- Linux: the fork server ----------------------------------------------------------------

class _Server:
    """The tutor's handle on one fork server: its process and its end of the control socket.
    `spawn` starts one (the tutor's child); `clone` forks another from a ready one (that
    server's child, which the tutor cannot reap or wait for, only watch)."""

    def __init__(self, control: socket.socket, pid: int,
                 proc: subprocess.Popen[bytes] | None = None) -> None:
        self.control = control
        self.pid = pid
        self.proc = proc
        self.ready = False
        self.lost = False  # it is gone, or no longer to be trusted
        self.error: str | None = None  # why it could not start, as it said
        self.references: _References | None = None  # its reference process, once ready
        self.parent: int | None = None  # a clone's: the server it was forked from
        # the children it told of that the tutor must reap if the server dies: its reference
        # process and the child it forked ahead for the next check
        self.told: dict[str, int] = {}
        self.checking: int | None = None  # the last check's child: `_Forked` reaps it

    @classmethod
    def spawn(cls, warm_up: bool = True) -> _Server:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            fd = theirs.fileno()
            proc = start_registered(lambda: subprocess.Popen(
                [sys.executable, "-m", "gradtutor.checking.worker", "--serve", str(fd),
                 "--tutor", str(os.getpid()),  # a sweep can tell when its tutor is gone
                 *([] if warm_up else ["--no-warm-up"])],
                pass_fds=(fd,), cwd=os.path.abspath(os.sep), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=server_environment(os.environ), start_new_session=True))
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return cls(mine, proc.pid, proc)

    def clone(self) -> _Server | None:
        """A second server forked from this ready one (no check may be running on it): it
        shares this one's memory and costs no import. None if this one is gone. The clone
        ends with this server (its parent-death signal)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.control, [protocol.line(protocol.clone())], [theirs.fileno()])
        except OSError:
            self.lost = True
            mine.close()
            return None
        finally:
            theirs.close()
        reply = self.receive(REPLY_WAIT)
        if reply is None or reply["type"] != "cloned":
            mine.close()
            return None
        pid = reply["pid"]
        register_worker(pid)
        clone = _Server(mine, pid)
        clone.parent = self.pid
        return clone

    def alive(self) -> bool:
        if self.lost:
            return False
        return self.proc.poll() is None if self.proc is not None else self._clone_running()

    def _clone_running(self) -> bool:
        """A clone is not the tutor's child, so its pid may name another process once its
        parent has reaped it: it is this clone only while that parent is still its parent."""
        return _running(self.pid) and _parent_of(self.pid) == self.parent

    def receive(self, timeout: float,
                fds: list[int] | None = None) -> protocol.FromServer | None:
        """The server's next message but a `Spare` (noted in `told`); None if none came in
        time or the server is gone. The fds that came with it are appended to `fds` (closed,
        if it is None)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive_one(deadline - time.monotonic(), fds)
            if message is None or message["type"] != "spare":
                return message
            self.told["spare"] = message["pid"]

    def _receive_one(self, timeout: float, fds: list[int] | None = None, *,
                     even_if_lost: bool = False) -> protocol.FromServer | None:
        if self.lost and not even_if_lost:
            return None
        try:
            readable, _, _ = select.select([self.control], [], [], max(0.0, timeout))
            data, passed = (socket.recv_fds(self.control, 65536, 1)[:2] if readable
                            else (None, []))
        except (OSError, ValueError):  # closed under us by close()
            data, passed = b"", []
        if fds is None:
            for fd in passed:
                os.close(fd)
        else:
            fds.extend(passed)
        if data is None:
            return None
        try:
            return protocol.decode_from_server(data)
        except protocol.Malformed:  # end of file, or something the server never says
            self.lost = True
            return None

    def wait_ready(self, timeout: float) -> bool:
        if not self.ready:
            fds: list[int] = []
            message = self.receive(timeout, fds)
            if message is not None and message["type"] == "failed":
                self.error = message["error"]
            if message is not None and message["type"] == "ready":
                self.ready = True
                if fds:
                    self.references = _References(fds.pop())
                self.told["references"] = message["references"]
                if message["spare"] is not None:
                    self.told["spare"] = message["spare"]
            for fd in fds:
                os.close(fd)
        return self.ready

    def submit(self, slot: Slot) -> int | None:
        """Hand the server the slot's request and pipes; the pid of the child it forked, or
        None if it is gone or did not answer."""
        request = protocol.line(protocol.hand_over(str(slot.request_path), str(slot.work)))
        try:
            socket.send_fds(self.control, [request], [slot.output_w, slot.results_w])
        except OSError:
            self.lost = True
            return None
        reply = self.receive(REPLY_WAIT)
        if reply is None or reply["type"] != "child":
            self.lost = True
            return None
        pid = reply["pid"]
        if self.told.get("spare") == pid:  # a check's child now: `_Forked` reaps it
            del self.told["spare"]
        self.checking = pid
        return pid

    def stop(self) -> None:
        """Kill the server (it leads its own session) and reap it. Idempotent. The socket
        stays open for a check still reading it; `close_socket` closes it."""
        with contextlib.suppress(OSError, ValueError):  # what it said before it went: the
            while (said := self._receive_one(0.0, even_if_lost=True)) is not None:
                if said["type"] == "spare":  # the child it forked last, say
                    self.told["spare"] = said["pid"]
        self.lost = True
        # its reference process and waiting child (and a check's child, clones: those are
        # reaped by whoever watches them too, harmlessly)
        orphans = {*self.told.values(), *children_of(self.pid)} - {self.checking}
        if self.proc is None:  # a clone: its parent server reaps it, or the tutor once
            if self._clone_running():  # that parent is gone (the tutor is the subreaper)
                kill_group(self.pid)
            _reap_orphans([self.pid], self.parent)  # its parent's, or the tutor's
        elif self.proc.poll() is None:
            kill_group(self.pid)  # its reference process too: it is in the server's group
            self.proc.wait()
        forget_worker(self.pid)
        _reap_orphans(sorted(orphans), self.pid)

    def close_socket(self) -> None:
        self.control.close()
        if self.references is not None:
            self.references.close()


# Allocations through glibc's malloc, which backs its heap with transparent huge pages where
# the kernel allows it (THP "madvise" or "always"; glibc 2.35+). The fork server's 200 MiB of
# heap is then some 100 huge pages instead of 50,000 small ones, so forking a check's child
# costs about 1.5 ms instead of 6-10, and its exit about 6 ms instead of 12 (benchmarks/
# checks.py; measured on this project's 2-core Linux machine). Elsewhere they do nothing.
SERVER_TUNING = {"PYTHONMALLOC": "malloc", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def server_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The fork server's environment: a worker's, with SERVER_TUNING unless the tutor's
    environment sets those variables itself. The server removes them again once started
    (TUNED_MARK says so), so learner code neither sees nor passes them on."""
    env = worker_environment(base)
    if not any(name in base for name in SERVER_TUNING):
        env.update(SERVER_TUNING)
        env[TUNED_MARK] = ",".join(SERVER_TUNING)
    return env


class _References:
    """The tutor's end of the fork server's reference process (`worker.serve_references`):
    asked for a checker's references on a seed while the check's child starts, it answers
    once the check is over. One question at a time; after any failure it is of no more use,
    and checks send the references the old way (`worker.reference_elsewhere`)."""

    def __init__(self, fd: int) -> None:
        self._socket = socket.socket(fileno=fd)
        self._pending = b""
        self.lost = False

    def ask(self, checker: str, seed: int) -> bool:
        try:
            self._socket.sendall(protocol.line(protocol.reference_request(checker, seed)))
        except OSError:
            self.lost = True
        return not self.lost

    def answer(self, timeout: float) -> protocol.Expected | None:
        """The answer to the last question, or None (it failed, or said nothing in `timeout`
        seconds)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending and not self.lost:
            try:
                readable, _, _ = select.select([self._socket], [], [],
                                               max(0.0, deadline - time.monotonic()))
                chunk = self._socket.recv(1 << 20) if readable else b""
            except (OSError, ValueError):
                chunk = b""
            self._pending += chunk
            self.lost = not chunk
        line, _, self._pending = self._pending.partition(b"\n")
        try:
            if not self.lost:
                return protocol.decode_reference(line)
        except protocol.Malformed:
            pass
        self.lost = True
        return None

    def close(self) -> None:
        self.lost = True
        self._socket.close()


class _Forked:
    """A check's child, forked by the server: the `runner.Process` that `supervise` watches.

    The server reports how it ended. If the server dies meanwhile, the child re-parents to the
    tutor (the subreaper), which then reaps it itself and so still learns its exit status."""

    memory_capped = False  # the child lowers its own RLIMIT_AS, as every Linux worker does

    def __init__(self, server: _Server, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.ended = False
        self.returncode: int | None = None

    def learner_starts(self, memory_bytes: int) -> None:
        pass

    def wait_for(self, seconds: float) -> bool:
        if self.ended:
            return True
        deadline = time.monotonic() + seconds
        if not self.server.lost:
            message = self.server.receive(seconds)
            if message is not None and message["type"] == "exit":
                self.returncode, self.ended = message["code"], True
                return True
            if not self.server.lost:
                return False
            self.server.stop()  # once it is reaped, its orphans are the tutor's
        return self.reap_orphan(deadline)

    def reap_orphan(self, deadline: float) -> bool:
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # not ours (no subreaper): it went to init, or is gone
                if not _running(self.pid):
                    self.ended = True
                    return True
            else:
                if done:
                    self.returncode, self.ended = os.waitstatus_to_exitcode(status), True
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def kill(self) -> None:
        if not self.ended:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)  # it may not have left the server's group yet
        kill_group(self.pid)

    def wait(self) -> None:
        if self.wait_for(KILL_WAIT):
            return
        self.server.stop()  # a server that does not report its child is of no more use
        if not self.wait_for(KILL_WAIT):
            self.ended = True  # give up waiting; the exit status stays unknown


def _reap_orphans(pids: list[int], server: int | None) -> None:
    """Once `server` is dead, its children die too (their parent-death signal) and become
    the tutor's, the subreaper's: reap them (bounded). One that is neither the tutor's child
    nor still the server's is left alone: its pid may name another process by now."""
    deadline = time.monotonic() + KILL_WAIT
    for pid in pids:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                if not _running(pid) or _parent_of(pid) != server:
                    break  # gone, or someone else's
                done = 0
            if done or time.monotonic() >= deadline:
                break
            time.sleep(0.005)


def _running(pid: int) -> bool:
    """Whether `pid` names a process that has not ended (a zombie has)."""
    stat = process_stat(pid)
    return stat is not None and stat[1] != "Z"


def _parent_of(pid: int) -> int | None:
    """The parent of `pid`, or None if it is gone."""
    stat = process_stat(pid)
    return stat[0] if stat is not None else None


class _Engine:
    """What both engines share: a lock, and the thread that starts their worker."""

    _state: threading.Lock
    _starting: threading.Thread | None

    def start(self) -> None:
        raise NotImplementedError

    def _await_start(self) -> None:
        """Start the worker if need be, and wait until that start has ended."""
        self.start()
        with self._state:
            starting = self._starting
        if starting is not None:
            starting.join()


class _ForkEngine(_Engine):
    """Runs requests in children of a fork server, restarting the server when it dies.
    `first`, if given, makes its first server (a clone of another engine's); it may give
    None, and a server is then spawned as usual."""

    def __init__(self, first: Callable[[], _Server | None] | None = None,
                 warm_up: bool = True) -> None:
        self._first = first
        self._warm_up = warm_up
        self._state = threading.Lock()
        self._server: _Server | None = None
        self._starting: threading.Thread | None = None
        self._current: _Forked | None = None
        self._closed = False
        self._broken = False  # no server could start: every request runs cold
        # references by (checker, seed), the latest last: a seed checked again (a class
        # graded on one seed, `check --all` run again) needs no new ones
        self._known: OrderedDict[tuple[str, int], protocol.Expected] = OrderedDict()

    @property
    def pid(self) -> int | None:
        server = self._server
        return server.pid if server is not None and server.alive() else None

    def start(self) -> None:
        with self._state:
            if (self._closed or self._broken or self._server is not None
                    or (self._starting is not None and self._starting.is_alive())):
                return
            self._starting = threading.Thread(target=self._spawn, name="gradtutor-warm-start",
                                              daemon=True)
            self._starting.start()

    def _spawn(self) -> None:
        try:
            first, self._first = self._first, None  # only the first: later ones are spawned
            server = (first() if first is not None else None) or _Server.spawn(self._warm_up)
        except (OSError, subprocess.SubprocessError):
            with self._state:
                self._broken = True
            return
        with self._state:
            if not self._closed:
                self._server = server
                return
        server.stop()
        server.close_socket()

    def _ready_server(self) -> _Server | None:
        """A server ready for a request, started and waited for if need be (twice at most);
        None if there is none to be had."""
        for _ in range(2):
            with self._state:
                server = self._server
            if server is not None and not server.alive():
                self._drop(server)
                server = None
            if server is None:
                self._await_start()
                with self._state:
                    server = self._server
                if server is None:
                    return None
            if server.wait_ready(STARTUP_ALLOWANCE):
                return server
            self._drop(server)
            if server.error is not None:  # it cannot import torch: a cold worker will say so
                break
        with self._state:
            self._broken = True
        return None

    def wait_ready(self) -> bool:
        return self._ready_server() is not None

    def clone_server(self) -> _Server | None:
        """A clone of this engine's server, once it is ready (`_Server.clone`); the caller
        holds the lock that keeps checks off it meanwhile. None if there is none to clone."""
        server = self._ready_server()
        return server.clone() if server is not None else None

    def _drop(self, server: _Server) -> None:
        with self._state:
            if self._server is server:
                self._server = None
        server.stop()
        server.close_socket()

    def run(self, request: protocol.Request, timeout: float) -> Outcome:
        for _ in range(2):
            server = self._ready_server()
            if server is None:
                break
            outcome, retry = self._attempt(server, request, timeout)
            if server.lost:
                self._drop(server)
                self.start()  # the next server, in the background
            if not retry or self._closed:
                return outcome
        _refuse_if(self._closed)
        return run_worker(request, timeout)

    def _attempt(self, server: _Server, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        """One run in a fresh child; and whether it may be retried (the server went away
        before any learner code ran)."""
        reference, asked = self._reference(server, request)
        if request["kind"] == "check" and (reference is not None or asked):
            request = {**request, "reference": "tutor"}
        slot = Slot()
        try:
            slot.write_request(request)
            before = tutor_descendants()
            started = time.monotonic()
            pid = server.submit(slot)
            slot.handed_over()
            if pid is None:
                # gone before it said so much as a pid: a child it may have forked is found
                # by the sweep (an orphan of the tutor's now), and nothing it did is kept
                server.stop()
                sweep_leftovers(before, str(slot.base))
                outcome = collect(slot, request, None, False, False, started)
                return outcome, True
            child = _Forked(server, pid)
            register_worker(pid, child.kill)  # spared by other threads' sweeps, if it is ours
            with self._state:
                self._current = child
            try:
                outcome = supervise(slot, child, request, timeout, before, started)
            finally:
                with self._state:
                    self._current = None
            if asked and request["kind"] == "check":
                reference = self._answer(server, request)
                if reference is None:  # it could not be judged: again, the old way
                    return outcome, True
            if reference is not None:
                outcome = replace(outcome[0], reference=reference), outcome[1]
            return outcome, server.lost and not slot.results.first_line.is_set()
        finally:
            slot.close()

    def _reference(self, server: _Server, request: protocol.Request) -> tuple[
            protocol.Expected | None, bool]:
        """For a check: its references if known already, else whether the server's reference
        process was asked for them (False: the check's worker sends them itself)."""
        references = server.references
        if request["kind"] != "check" or references is None or references.lost:
            return None, False
        key = (request["checker"], request["seed"])
        known = self._known.get(key)
        if known is not None:
            self._known.move_to_end(key)
            return known, False
        return None, references.ask(*key)

    def _answer(self, server: _Server,
                request: protocol.CheckRequest) -> protocol.Expected | None:
        """The answer to `_reference`'s question, remembered; None if there is none."""
        assert server.references is not None  # it was asked
        reference = server.references.answer(STARTUP_ALLOWANCE)
        if reference is not None:
            self._known[(request["checker"], request["seed"])] = reference
            while len(self._known) > KNOWN_REFERENCES:
                self._known.popitem(last=False)
        return reference

    def close(self) -> None:
        with self._state:
            self._closed = True
            starting = self._starting
        if starting is not None:
            starting.join(timeout=10.0)  # it stops what it started once it sees _closed
        with self._state:
            server, self._server = self._server, None
            current = self._current
        if current is not None:
            stop_workers([current.pid])  # the check in flight ends now; its own thread sweeps
        if server is not None:
            server.stop()
            if current is None:
                server.close_socket()
        if current is not None:
            # its server is gone, so it is the tutor's to reap; at exit, its thread will not
            current.reap_orphan(time.monotonic() + KILL_WAIT)


# ---- elsewhere: a pre-started spawned worker -------------------------------------------------

class _Prestarted:
    """A spawned worker that imports torch (or has) and waits for `go`, with its slot."""

    def __init__(self, contain: Contain) -> None:
        self.slot = Slot()
        try:
            self.worker, self._go = spawn_worker(self.slot, preload=True, contain=contain)
        except BaseException:
            self.slot.close()
            raise
        self.proc = self.worker.proc
        self.slot.handed_over()

    def answer(self, request: protocol.Request, timeout: float) -> tuple[Outcome, bool]:
        """The run; and whether it may be retried (the worker died before it said a word,
        so before any learner code ran: killed while it waited, say)."""
        try:
            self.slot.write_request(request)
            before = tutor_descendants() - {self.proc.pid}
            started = time.monotonic()
            send_go(self._go)
            self._go = -1
            outcome = supervise(self.slot, self.worker, request, timeout, before, started)
            return outcome, not self.slot.results.first_line.is_set()
        finally:
            self.discard()

    def discard(self) -> None:
        """End it (if it still waits) and whatever it started, and remove its slot.
        Idempotent."""
        if self._go >= 0:
            os.close(self._go)
            self._go = -1
        self.worker.kill()
        self.proc.wait()
        forget_worker(self.proc.pid)
        self.worker.release()
        for drain in (self.slot.output, self.slot.results):
            if drain.is_alive():
                drain.join(timeout=2.0)
        self.slot.close()


class _PrestartEngine(_Engine):
    """Runs each request in a pre-started worker, and pre-starts the next after it."""

    def __init__(self, contain: Contain) -> None:
        self._contain = contain
        self._state = threading.Lock()
        self._waiting: _Prestarted | None = None
        self._starting: threading.Thread | None = None
        self._current: _Prestarted | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        waiting = self._waiting
        return waiting.proc.pid if waiting is not None and waiting.proc.poll() is None else None

    def start(self) -> None:
        with self._state:
            if (self._closed or self._waiting is not None
                    or (self._starting is not None and self._starting.is_alive())):
                return
            self._starting = threading.Thread(target=self._spawn, name="gradtutor-warm-start",
                                              daemon=True)
            self._starting.start()

    def _spawn(self) -> None:
        try:
            worker = _Prestarted(self._contain)
        except (OSError, subprocess.SubprocessError):
            return
        with self._state:
            if not self._closed:
                self._waiting = worker
                return
        worker.discard()

    def wait_ready(self) -> bool:
        self._await_start()
        with self._state:
            return self._waiting is not None

    def run(self, request: protocol.Request, timeout: float) -> Outcome:
        self._await_start()
        with self._state:
            worker, self._waiting = self._waiting, None
            self._current = worker
        try:
            if worker is None or worker.proc.poll() is not None:  # none, or it died waiting
                if worker is not None:
                    worker.discard()
                _refuse_if(self._closed)
                return run_worker(request, timeout)
            outcome, retry = worker.answer(request, timeout)
            return run_worker(request, timeout) if retry and not self._closed else outcome
        finally:
            with self._state:
                self._current = None
            self.start()  # the next one, in the background

    def close(self) -> None:
        with self._state:
            self._closed = True
            starting = self._starting
        if starting is not None:
            starting.join(timeout=10.0)
        with self._state:
            waiting, self._waiting = self._waiting, None
            current = self._current
        if current is not None:
            # the request in flight ends now, as stopped; its own thread cleans up
            stop_workers([current.proc.pid])
            with contextlib.suppress(subprocess.TimeoutExpired):
                current.proc.wait(KILL_WAIT)  # reaped here too: at exit, its thread will not
        if waiting is not None:
            waiting.discard()
