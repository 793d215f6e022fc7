"""Where requests run: the `Engine` protocol, and `Lifecycle`, the one state machine every
engine is: a worker made ahead and kept ready (a fork server, a pre-started worker), each
request taken by it or, when there is none, by a fresh cold worker of its own (the one-shot
case, which is all the cold engine does), and one `close` that stops them all.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar

from gradtutor.checking import protocol
from gradtutor.checking.check import Outcome
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.spawned import Contain, WaitingWorker, contain_in_job
from gradtutor.runtime.supervise import KILL_WAIT


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


class Running(Protocol):
    """The process of a request an engine runs now: what `close` stops, then waits for."""

    pid: int

    def settle(self, seconds: float) -> None:
        """Wait (up to `seconds`) until it has ended and is reaped."""


R = TypeVar("R")  # what an engine keeps ready: a fork server, a pre-started worker, nothing
P = TypeVar("P", bound=Running)  # the process a request runs in there


class Lifecycle(Generic[R, P]):
    """The lifecycle of every engine, under one lock. A worker (`R`) is made in the background
    (`start`) and kept ready; each request takes it (`_take`) and runs in it (`_attempt`), on a
    fresh one if it may be retried, and in a fresh cold worker of its own when there is none
    (`_one_shot`). `close` stops every request running now (the processes `P`, and the
    one-shot workers), lets go of what is kept, and refuses later requests. A subclass says
    how its worker is made, taken, used and let go; with `attempts` 0 it keeps none, and every
    request is a one-shot: the cold engine. Runs may come from several threads at once."""

    attempts = 1  # how many kept workers one request may try before it runs cold

    def __init__(self, workers: Workers, environ: Mapping[str, str],
                 contain: Contain = contain_in_job) -> None:
        self._workers = workers
        self._environ = environ
        self._contain = contain
        self._state = threading.Lock()
        self._ready: R | None = None  # the worker kept for the next request
        self._starting: threading.Thread | None = None
        # the processes of the requests running now: True for one in the kept worker
        self._current: dict[Running, bool] = {}
        self._closed = False
        self._broken = False  # no worker can be made: every request runs cold
        self._served = False  # a request has run (in a worker of this engine's, or cold)

    def start(self) -> None:
        with self._state:
            if (self.attempts == 0 or self._closed or self._broken or self._ready is not None
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
            return self._one_shot(request, timeout)
        finally:
            self._served = True
            self._after_run()

    def _one_shot(self, request: protocol.Request, timeout: float) -> Outcome:
        """The request in a fresh worker of its own, which imports torch first."""
        with self._state:
            refuse_if(self._closed)
        worker = WaitingWorker(self._workers, tied=True, contain=self._contain,
                               environ=self._environ, references=request["kind"] == "check")
        try:
            if not self._record(worker, kept=False):  # closed while it started: it ends at
                self._workers.stop([worker.pid])  # once, as stopped
            outcome, _ = worker.answer(request, timeout)
            return outcome
        finally:
            self._forget(worker)
            worker.discard()

    def _record(self, process: Running, *, kept: bool = True) -> bool:
        """Note `process` as running a request (`kept`: in the kept worker), so that `close`
        stops it; whether the engine is still open."""
        with self._state:
            self._current[process] = kept
            return not self._closed

    def _forget(self, process: Running) -> None:
        with self._state:
            self._current.pop(process, None)

    def close(self) -> None:
        with self._state:
            self._closed = True
            starting = self._starting
        if starting is not None:
            starting.join(timeout=10.0)  # it lets go of what it made once it sees _closed
        with self._state:
            ready, self._ready = self._ready, None
            running = dict(self._current)
        # each ends now, as stopped; its thread cleans up
        self._workers.stop([process.pid for process in running])
        if ready is not None:
            self._let_go(ready, running=any(running.values()))
        with self._state:  # a request's process recorded meanwhile (its thread was between
            now = list(self._current)  # the hand-over and the record)
        late = [process.pid for process in now if process not in running]
        if late:
            self._workers.stop(late)
        for process in now:
            process.settle(KILL_WAIT)  # at exit, its own thread will not

    def loading(self) -> bool:
        """Whether a request now would first wait for a worker to import torch. Here: none
        has run yet, and none will run cold; a subclass that can tell readiness says more
        exactly."""
        with self._state:
            return not (self._served or self._closed or self._broken or self.attempts == 0)

    # what a subclass that keeps a worker says
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
