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
import signal
import socket
import subprocess
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from gradtutor.checking import protocol
from gradtutor.checking.channel import LineReader, readable_within
from gradtutor.checking.lifetime import (
    LINUX,
    Workers,
    children_of,
    kill_group,
    own_children_in_session,
    process_stat,
    tutor_descendants,
)
from gradtutor.checking.runner import (
    STARTUP_ALLOWANCE,
    ColdEngine,
    Contain,
    Engine,
    Outcome,
    Slot,
    WaitingWorker,
    contain_in_job,
    reference_alone,
    refuse_if,
    run_check,
    run_snippet,
    supervise,
)
from gradtutor.checking.snippet import SnippetResult
from gradtutor.checking.spawn import WORKER, server_environment, start, tutor_environ
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.model import Exercise

FORK_SERVER = (LINUX and hasattr(os, "fork") and hasattr(socket, "send_fds")
               and hasattr(socket, "SOCK_SEQPACKET"))
REPLY_WAIT = 10.0  # seconds a server may take to say it forked
KILL_WAIT = 2.0  # seconds to wait for a killed child to be reported, before giving up on it
KNOWN_REFERENCES = 64  # (checker, seed) pairs whose references a fork engine keeps


def warm_enabled(environ: Mapping[str, str]) -> bool:
    """Whether checks should use a warm worker: yes, unless GRADTUTOR_WARM is 0 (or false,
    no, off), which makes every check cold, for comparison and as a way out."""
    return environ.get("GRADTUTOR_WARM", "1").strip().lower() not in ("0", "false", "no", "off")


class WarmWorker:
    """Checks and snippets in a worker that has already imported torch.

    `start()` begins the (slow) start in the background; `check` and `run_snippet` wait for it
    if need be, or run cold if it cannot start. They may be called from any thread, one at a
    time. `close()` (or leaving the `with` block, or the end of the program) kills the worker
    and anything below it.
    `fork` picks the fork server (True) or a pre-started spawned worker (False); the default
    is the fork server where it works (Linux). `contain` puts each spawned worker in a job
    (Windows; a fake in tests). `twin_of`: the first fork server is forked from that worker's
    (once it is ready, between two of its checks), so that several workers import torch once
    and share its memory; where that cannot be, it starts its own. `warm_up` off: the child
    forked ahead for the next check does not run a training step first, which checks back to
    back (`grade`) would wait for; a clone has its first server's setting. `workers`: the
    processes of the checks this worker runs are registered there, with those of the other
    engines that may run checks at the same time (a twin shares its first worker's).
    `environ`: the tutor's environment, which its workers' is made from."""

    def __init__(self, *, fork: bool | None = None, contain: Contain = contain_in_job,
                 twin_of: WarmWorker | None = None, warm_up: bool = True,
                 workers: Workers | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        use_fork = FORK_SERVER if fork is None else fork and FORK_SERVER
        env = tutor_environ(environ)
        first = twin_of._clone_server if twin_of is not None else None
        self.workers: Workers = (twin_of.workers if twin_of is not None else
                                 workers if workers is not None else Workers())
        self._engine: Engine = (_ForkEngine(self.workers, env, first, warm_up) if use_fork
                                else _PrestartEngine(self.workers, env, contain))
        self._lock = threading.Lock()  # one check at a time
        # the safety net: the engine is closed when this object goes, or at exit at the latest
        self._finalizer = weakref.finalize(self, self._engine.close)

    def start(self) -> None:
        """Start the worker in the background; returns at once. Idempotent."""
        self._engine.start()

    def loading(self) -> bool:
        """Whether a check asked for now would first wait for the worker to import torch:
        it is starting, or has not yet said it is ready (a fork server), or has run no
        request yet (a pre-started worker, which never says). Returns at once; asked
        between two checks, never from a second thread during one."""
        with self._lock:
            return self._engine.loading()

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
            return run_check(exercise, path, seed=seed, timeout=timeout, engine=self._engine)

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult:
        """`runner.run_snippet`, in a fresh child of the warm worker."""
        with self._lock:
            return run_snippet(code, show=show, series=series, timeout=timeout,
                               engine=self._engine)

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


# ---- Linux: the fork server ----------------------------------------------------------------

class _Server:
    """The tutor's handle on one fork server: its process and its end of the control socket.
    `spawn` starts one (the tutor's child); `clone` forks another from a ready one (that
    server's child, which the tutor cannot reap or wait for, only watch)."""

    def __init__(self, workers: Workers, control: socket.socket, pid: int,
                 proc: subprocess.Popen[bytes] | None = None) -> None:
        self.workers = workers  # where it is registered, and its clones
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
        # the check's child that a `_Forked` watches now (and reaps); set and cleared with
        # the engine's record of it (`_ForkEngine._running`), so that `stop` leaves to that
        # watcher only a child `close` can see; any other child is reaped as an orphan
        self.checking: int | None = None

    @classmethod
    def spawn(cls, workers: Workers, environ: Mapping[str, str],
              warm_up: bool = True) -> _Server:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            fd = theirs.fileno()
            proc = start(WORKER, [
                "--serve", str(fd), "--tutor", str(os.getpid()),  # a sweep can tell when
                *([] if warm_up else ["--no-warm-up"])],  # its tutor is gone
                env=server_environment(environ), cwd=os.path.abspath(os.sep),
                popen={"pass_fds": (fd,), "start_new_session": True}, starter=workers.start)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return cls(workers, mine, proc.pid, proc)

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
        self.workers.register(pid)
        clone = _Server(self.workers, mine, pid)
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
            readable = readable_within(self.control.fileno(), timeout)
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
        # and a spare it forked but died before it told of: still of the server's session
        orphans |= set(own_children_in_session(self.pid)) - {self.checking}
        self.workers.forget(self.pid)
        _reap_orphans(sorted(orphans), self.pid)

    def close_socket(self) -> None:
        self.control.close()
        if self.references is not None:
            self.references.close()


class _References:
    """The tutor's end of the fork server's reference process (`worker.serve_references`):
    asked for a checker's references on a seed while the check's child starts, it answers
    once the check is over. One question at a time; after any failure it is of no more use,
    and checks send the references the old way (`worker.reference_elsewhere`)."""

    def __init__(self, fd: int) -> None:
        self._socket = socket.socket(fileno=fd)
        self._lines = LineReader(fd)
        self.lost = False

    def ask(self, checker: protocol.CheckerRef, seed: int) -> bool:
        try:
            self._socket.sendall(protocol.line(protocol.reference_request(checker, seed)))
        except OSError:
            self.lost = True
        return not self.lost

    def answer(self, timeout: float) -> protocol.Expected | None:
        """The answer to the last question, or None (it failed, or said nothing in `timeout`
        seconds)."""
        line = None if self.lost else self._lines.next(timeout)
        try:
            if line is not None:
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
            else:
                if not done and time.monotonic() >= deadline:
                    # the tutor's own child, still dying on a loaded machine: its pid cannot
                    # name another process until it is reaped, so it is safe to make sure
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    break
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


class _Running(Protocol):
    """The process of the request an engine runs now: what `close` stops, then reaps."""

    pid: int


R = TypeVar("R")  # what a warm engine keeps ready: a fork server, or a pre-started worker
P = TypeVar("P", bound=_Running)


class _WarmEngine(Generic[R, P]):
    """The lifecycle both warm engines share. A worker (`R`) is made in the background
    (`start`) and kept ready; each request takes it (`_take`) and runs in it (`_attempt`), on
    a fresh one if it may be retried, and in a cold worker when there is none; `close` stops
    the request running now (the process `P`), lets go of what is kept, and refuses later
    requests. A subclass says how its worker is made, taken, used and let go."""

    attempts = 1  # how many workers one request may try before it runs cold

    def __init__(self, workers: Workers, environ: Mapping[str, str]) -> None:
        self._workers = workers
        self._environ = environ
        self._cold = ColdEngine(workers, environ=environ)
        self._state = threading.Lock()
        self._ready: R | None = None  # the worker kept for the next request
        self._starting: threading.Thread | None = None
        self._current: P | None = None  # the process of the request running now
        self._closed = False
        self._broken = False  # no worker can be made: every request runs cold
        self._served = False  # a request has run (in a worker of this engine's, or cold)

    def start(self) -> None:
        with self._state:
            if (self._closed or self._broken or self._ready is not None
                    or (self._starting is not None and self._starting.is_alive())):
                return
            self._starting = threading.Thread(target=self._start_one, daemon=True,
                                              name="gradtutor-warm-start")
            self._starting.start()

    def _start_one(self) -> None:
        try:
            made = self._make()
        except (OSError, subprocess.SubprocessError):
            self._could_not_make()
            return
        with self._state:
            if not self._closed:
                self._ready = made
                return
        self._let_go(made, running=False)

    def _await_start(self) -> None:
        """Start the worker if need be, and wait until that start has ended."""
        self.start()
        with self._state:
            starting = self._starting
        if starting is not None:
            starting.join()

    def run(self, request: protocol.Request, timeout: float) -> Outcome:
        try:
            for _ in range(self.attempts):
                taken = self._take()
                if taken is None:
                    break
                outcome, retry = self._attempt(taken, request, timeout)
                if not retry or self._closed:
                    return outcome
            refuse_if(self._closed)
            return self._cold.run(request, timeout)
        finally:
            self._served = True
            self._after_run()

    def _running(self, process: P | None) -> None:
        with self._state:
            self._current = process

    def close(self) -> None:
        with self._state:
            self._closed = True
            starting = self._starting
        if starting is not None:
            starting.join(timeout=10.0)  # it lets go of what it made once it sees _closed
        with self._state:
            ready, self._ready = self._ready, None
            current = self._current
        if current is not None:
            self._workers.stop([current.pid])  # ends now, as stopped; its thread cleans up
        self._cold.close()  # and a cold run in its place
        if ready is not None:
            self._let_go(ready, running=current is not None)
        with self._state:  # a request's process recorded meanwhile (its thread was between
            late, current = current is None, self._current  # the hand-over and the record)
        if current is not None:
            if late:
                self._workers.stop([current.pid])
            self._reap(current)  # at exit, its own thread will not

    def loading(self) -> bool:
        """Whether a request now would first wait for a worker to import torch. Here: none
        has run yet, and none will run cold; a subclass that can tell readiness says more
        exactly."""
        with self._state:
            return not (self._served or self._closed or self._broken)

    # what a subclass says
    def _make(self) -> R:
        raise NotImplementedError

    def _could_not_make(self) -> None:
        """`_make` failed (no process could be started)."""

    def _take(self) -> R | None:
        """The worker for the next request, waited for if need be; None if there is none."""
        raise NotImplementedError

    def _attempt(self, taken: R, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        """The run in `taken`; and whether it may be retried (no learner code ran)."""
        raise NotImplementedError

    def _after_run(self) -> None:
        """After each request, whichever way it ran."""

    def _let_go(self, kept: R, *, running: bool) -> None:
        """End a worker that was kept (`running`: while `close` stops a request in it)."""
        raise NotImplementedError

    def _reap(self, current: P) -> None:
        """After `close` stopped it: wait (bounded) until `current` is reaped."""
        raise NotImplementedError


class _ForkEngine(_WarmEngine[_Server, _Forked]):
    """Runs requests in children of a fork server, restarting the server when it dies.
    `first`, if given, makes its first server (a clone of another engine's); it may give
    None, and a server is then spawned as usual."""

    attempts = 2

    def __init__(self, workers: Workers, environ: Mapping[str, str],
                 first: Callable[[], _Server | None] | None = None,
                 warm_up: bool = True) -> None:
        super().__init__(workers, environ)
        self._first = first
        self._warm_up = warm_up
        # references by (checker, seed), the latest last: a seed checked again (a class
        # graded on one seed, `check --all` run again) needs no new ones
        self._known: OrderedDict[tuple[str, int], protocol.Expected] = OrderedDict()

    @property
    def pid(self) -> int | None:
        server = self._ready
        return server.pid if server is not None and server.alive() else None

    def _make(self) -> _Server:
        first, self._first = self._first, None  # only the first: later ones are spawned
        return (first() if first is not None else None) or _Server.spawn(
            self._workers, self._environ, self._warm_up)

    def _could_not_make(self) -> None:
        with self._state:
            self._broken = True

    def _take(self) -> _Server | None:
        """A server ready for a request, started and waited for if need be (twice at most);
        None if there is none to be had."""
        for _ in range(2):
            with self._state:
                server = self._ready
            if server is not None and not server.alive():
                self._drop(server)
                server = None
            if server is None:
                self._await_start()
                with self._state:
                    server = self._ready
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
        return self._take() is not None

    def loading(self) -> bool:
        """Whether a request now would first wait for a server to import torch: one is being
        started, or the one there has not said it is ready (asked of it at once, without
        waiting), or it is gone and must be started again. Between requests only: it reads
        the server's socket, which a running request reads too."""
        with self._state:
            if self._closed or self._broken:
                return False  # a request runs cold, or not at all: nothing to wait for
            starting = self._starting is not None and self._starting.is_alive()
            server = self._ready
        if starting or server is None:
            return True
        return not (server.alive() and server.wait_ready(0.0))

    def clone_server(self) -> _Server | None:
        """A clone of this engine's server, once it is ready (`_Server.clone`); the caller
        holds the lock that keeps checks off it meanwhile. None if there is none to clone."""
        server = self._take()
        return server.clone() if server is not None else None

    def _drop(self, server: _Server) -> None:
        with self._state:
            if self._ready is server:
                self._ready = None
        self._let_go(server, running=False)

    def _let_go(self, kept: _Server, *, running: bool) -> None:
        kept.stop()
        if not running:  # else the check in it still reads the socket; it closes it itself
            kept.close_socket()

    def _reap(self, current: _Forked) -> None:
        current.reap_orphan(time.monotonic() + KILL_WAIT)  # its server is gone: the tutor's

    def _running(self, process: _Forked | None) -> None:
        """Record the check's child as watched, on its server too, in one step that `close`
        cannot split: a child `close` does not see is not yet its server's `checking`, so
        `_Server.stop` reaps it with the server's other orphans."""
        with self._state:
            if self._current is not None:
                self._current.server.checking = None
            if process is not None:
                process.server.checking = process.pid
            self._current = process

    def _attempt(self, server: _Server, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        """One run in a fresh child; and whether it may be retried (the server went away
        before any learner code ran). A server lost on the way is replaced."""
        attempt = self._in_child(server, request, timeout)
        if server.lost:
            self._drop(server)
            self.start()  # the next server, in the background
        return attempt

    def _in_child(self, server: _Server, request: protocol.Request,
                  timeout: float) -> tuple[Outcome, bool]:
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
                # by the sweep (an orphan of the tutor's now); unless learner code started in
                # it (and killed the server), nothing it did is kept
                server.stop()
                outcome = supervise(slot, None, request, timeout, before=before,
                                    started=started, workers=self._workers)
                if not slot.learner_started:
                    return outcome, True
            else:
                child = _Forked(server, pid)
                self._workers.register(pid, child.kill)  # spared by other threads' sweeps
                self._running(child)
                try:
                    outcome = supervise(slot, child, request, timeout, before=before,
                                        started=started, workers=self._workers)
                finally:
                    self._running(None)
            if asked and request["kind"] == "check":
                reference = self._answer(server, request)
                if reference is None and not slot.learner_started:
                    return outcome, True  # nothing of the learner's ran: again, the old way
                if reference is None:  # it ran (and may have killed the server with its
                    # reference process): judged on references computed alone, never run again
                    reference = reference_alone(request, environ=self._environ)
            if reference is not None:
                outcome = replace(outcome[0], reference=reference), outcome[1]
            return outcome, server.lost and not slot.learner_started
        finally:
            slot.close()

    def _reference(self, server: _Server, request: protocol.Request) -> tuple[
            protocol.Expected | None, bool]:
        """For a check: its references if known already, else whether the server's reference
        process was asked for them (False: the check's worker sends them itself)."""
        references = server.references
        if request["kind"] != "check" or references is None or references.lost:
            return None, False
        key = (protocol.checker_key(request["checker"]), request["seed"])
        known = self._known.get(key)
        if known is not None:
            self._known.move_to_end(key)
            return known, False
        return None, references.ask(request["checker"], request["seed"])

    def _answer(self, server: _Server,
                request: protocol.CheckRequest) -> protocol.Expected | None:
        """The answer to `_reference`'s question, remembered; None if there is none."""
        assert server.references is not None  # it was asked
        reference = server.references.answer(STARTUP_ALLOWANCE)
        if reference is not None:
            self._known[(protocol.checker_key(request["checker"]), request["seed"])] = reference
            while len(self._known) > KNOWN_REFERENCES:
                self._known.popitem(last=False)
        return reference


# ---- elsewhere: a pre-started spawned worker -------------------------------------------------

class _PrestartEngine(_WarmEngine[WaitingWorker, WaitingWorker]):
    """Runs each request in a pre-started worker (`runner.WaitingWorker`), and pre-starts
    the next after it."""

    def __init__(self, workers: Workers, environ: Mapping[str, str], contain: Contain) -> None:
        super().__init__(workers, environ)
        self._contain = contain

    @property
    def pid(self) -> int | None:
        waiting = self._ready
        return waiting.pid if waiting is not None and waiting.alive() else None

    def _make(self) -> WaitingWorker:
        return WaitingWorker(self._workers, preload=True, contain=self._contain,
                             environ=self._environ)

    def wait_ready(self) -> bool:
        self._await_start()
        with self._state:
            return self._ready is not None

    def _take(self) -> WaitingWorker | None:
        """The waiting worker (now the request's, so that `close` stops it), unless it died
        while it waited."""
        self._await_start()
        with self._state:
            worker, self._ready = self._ready, None
            self._current = worker
        if worker is not None and not worker.alive():
            worker.discard()
            self._running(None)
            return None
        return worker

    def _attempt(self, taken: WaitingWorker, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        try:
            return taken.answer(request, timeout)
        finally:
            self._running(None)
            taken.discard()

    def _after_run(self) -> None:
        self.start()  # the next one, in the background

    def _let_go(self, kept: WaitingWorker, *, running: bool) -> None:
        kept.discard()

    def _reap(self, current: WaitingWorker) -> None:
        current.wait(KILL_WAIT)
