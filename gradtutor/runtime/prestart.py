"""The engine that runs each request in a worker spawned ahead of it (where there is no
fork server).
"""

from __future__ import annotations

from collections.abc import Mapping

from gradtutor.checking import protocol
from gradtutor.checking.check import Outcome
from gradtutor.runtime.engine import Lifecycle
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.spawned import Contain, WaitingWorker


class PrestartEngine(Lifecycle[WaitingWorker, WaitingWorker]):
    """Runs each request in a pre-started worker (`cold.WaitingWorker`), and pre-starts
    the next after it."""

    def __init__(self, workers: Workers, environ: Mapping[str, str], contain: Contain) -> None:
        super().__init__(workers, environ, contain)

    @property
    def pid(self) -> int | None:
        waiting = self._ready
        return waiting.pid if waiting is not None and waiting.alive() else None

    def _make(self) -> WaitingWorker:
        return WaitingWorker(self._workers, preload=True, contain=self._contain,
                             environ=self._environ, references=True)  # for a check

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
            if worker is not None:
                self._current[worker] = True
        if worker is not None and not worker.alive():
            worker.discard()
            self._forget(worker)
            return None
        return worker

    def _attempt(self, taken: WaitingWorker, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        try:
            return taken.answer(request, timeout)
        finally:
            self._forget(taken)
            taken.discard()

    def _after_run(self) -> None:
        self.start()  # the next one, in the background

    def _let_go(self, kept: WaitingWorker, *, running: bool) -> None:
        kept.discard()
