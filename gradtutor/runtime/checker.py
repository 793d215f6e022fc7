"""What the tutor needs of whatever checks learner code and runs lesson snippets for it: a
`Checker`. The warm worker (`gradtutor.runtime.warm.WarmWorker`, a process that has torch
loaded already) is one; `ColdChecker`, a fresh worker process per check, is the other.
Either way torch is never imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.checking.verdict import Verdict
    from gradtutor.lessons.model import Exercise


class Checker(Protocol):
    """Checks and snippet runs, one at a time; `start` may begin a worker ahead of them."""

    def start(self) -> None: ...

    def loading(self) -> bool:
        """Whether a check asked for now would first wait for a worker still importing
        torch (the first check of a session). Asked between checks, never during one."""
        ...

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict: ...

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult: ...

    def close(self) -> None: ...


class ColdChecker:
    """A new worker process for every check: slower to answer (torch loads each time), but
    needs nothing kept running."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        from gradtutor.runtime.cold import ColdEngine

        self._engine = ColdEngine(environ=environ)

    def start(self) -> None:
        pass

    def loading(self) -> bool:
        """False: every check loads torch here, none waits for a worker started earlier."""
        return False

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
        from gradtutor.runtime.run import run_check

        return run_check(exercise, path, seed=seed, timeout=timeout, engine=self._engine)

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult:
        from gradtutor.runtime.run import run_snippet

        return run_snippet(code, show=show, series=series, timeout=timeout, engine=self._engine)

    def close(self) -> None:
        """End a check still running, so quitting never waits for it or leaves it behind."""
        self._engine.close()


def make_checker(environ: Mapping[str, str]) -> Checker:
    """The warm worker if it is available and not turned off (GRADTUTOR_WARM=0), else cold."""
    from gradtutor.runtime.warm import WarmWorker, warm_enabled

    return WarmWorker(environ=environ) if warm_enabled(environ) else ColdChecker(environ)
