"""Fast checks: a worker that has already imported torch, so a check costs milliseconds.

On Linux a fork server (forkserver.py; the tutor's side in server.py, the engine fork.py)
imports torch and the checkers once, then forks one fresh child per check; elsewhere a
spawned worker is pre-started (prestart.py). Either way each check runs in a fresh process with
the same isolation as a cold check: `slot.Slot` (fresh folder and pipes),
`supervise.supervise` (the clock, the kill of the group, the sweep) and `outcome.decide` (the
verdict), so warm and cold verdicts agree. The tutor never imports torch.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from pathlib import Path

from gradtutor.checking.snippet import SnippetResult
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.engine import Engine
from gradtutor.runtime.fork import FORK_SERVER, ForkEngine
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.prestart import PrestartEngine
from gradtutor.runtime.run import run_check, run_snippet
from gradtutor.runtime.server import Server
from gradtutor.runtime.spawned import Contain, contain_in_job


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
                 environ: Mapping[str, str]) -> None:
        use_fork = FORK_SERVER if fork is None else fork and FORK_SERVER
        first = twin_of._clone_server if twin_of is not None else None
        self.workers: Workers = (twin_of.workers if twin_of is not None else
                                 workers if workers is not None else Workers())
        self._engine: Engine = (ForkEngine(self.workers, environ, first, warm_up) if use_fork
                                else PrestartEngine(self.workers, environ, contain))
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

    def _clone_server(self) -> Server | None:
        """For a `twin_of` this worker: a clone of its fork server, made between two checks
        once the server is ready (the twin's start waits for that)."""
        if not isinstance(self._engine, ForkEngine):
            return None
        with self._lock:
            return self._engine.clone_server()

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
        """`run.run_check`, in a fresh child of the warm worker."""
        with self._lock:
            return run_check(exercise, path, seed=seed, timeout=timeout, engine=self._engine)

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult:
        """`run.run_snippet`, in a fresh child of the warm worker."""
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


# ---- elsewhere: a pre-started spawned worker -------------------------------------------------

