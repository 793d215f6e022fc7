"""The cold engine: a fresh worker for every request (`Lifecycle`'s one-shot case), which
imports torch first: seconds a check, but nothing is kept running between checks."""

from __future__ import annotations

from collections.abc import Mapping

from gradtutor.checking import protocol
from gradtutor.checking.check import Outcome
from gradtutor.runtime.engine import Lifecycle
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.spawned import Contain, WaitingWorker, contain_in_job


class ColdEngine(Lifecycle[None, WaitingWorker]):
    """The `Engine` that starts a fresh worker for every request. Runs may come from several
    threads at once; `close` ends those running. `environ`: the tutor's environment, which
    its workers' is made from."""

    attempts = 0  # no worker is kept: every request is a one-shot

    def __init__(self, workers: Workers | None = None, *,
                 contain: Contain = contain_in_job, environ: Mapping[str, str]) -> None:
        self.workers = workers if workers is not None else Workers()
        super().__init__(self.workers, environ, contain)

    @property
    def pid(self) -> int | None:
        return None  # nothing waits between requests

    def wait_ready(self) -> bool:
        return True


def run_worker(request: protocol.Request, timeout: float, *,
               contain: Contain = contain_in_job, workers: Workers | None = None,
               environ: Mapping[str, str]) -> Outcome:
    """Run one request in a fresh cold worker (`ColdEngine`) and return what happened, leaving
    nothing behind: no process, no temporary file, even if the tutor itself is interrupted
    meanwhile. `contain` puts the worker in a Tree (a Job Object on Windows)."""
    return ColdEngine(workers, contain=contain, environ=environ).run(request, timeout)
