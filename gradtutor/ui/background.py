"""The walkthrough's background work: checks and lesson snippets run one at a time in a
thread, each result posted back as an event, so the key loop never waits for them.

Checks go to the warm worker (`gradtutor.checking.warm`, a process that has torch loaded
already) where it is there and enabled, else to a fresh worker process per check
(`gradtutor.checking.runner.run_check`). Either way torch is never imported here.
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gradtutor.checking.verdict import Verdict
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise
from gradtutor.walk_practice import CheckDone, CheckFailed, SnippetDone, SnippetFailed

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.walk import Event


class Checker(Protocol):
    """What the walkthrough needs of a checker; `gradtutor.checking.warm.WarmWorker` has it."""

    def start(self) -> None: ...

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict: ...

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult: ...

    def close(self) -> None: ...


class ColdChecker:
    """A new worker process for every check: slower to answer (torch loads each time), but
    needs nothing kept running."""

    def __init__(self) -> None:
        from gradtutor.checking.runner import ColdEngine

        self._engine = ColdEngine()

    def start(self) -> None:
        pass

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
        from gradtutor.checking.runner import run_check

        return run_check(exercise, path, seed=seed, timeout=timeout, engine=self._engine)

    def run_snippet(self, code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                    timeout: float = 20.0) -> SnippetResult:
        from gradtutor.checking.runner import run_snippet

        return run_snippet(code, show=show, series=series, timeout=timeout, engine=self._engine)

    def close(self) -> None:
        """End a check still running, so quitting never waits for it or leaves it behind."""
        self._engine.close()


def make_checker(environ: Mapping[str, str]) -> Checker:
    """The warm worker if it is available and not turned off (GRADTUTOR_WARM=0), else cold."""
    from gradtutor.checking.warm import WarmWorker, warm_enabled

    return WarmWorker() if warm_enabled(environ) else ColdChecker()


@dataclass(frozen=True)
class CheckJob:
    exercise: Exercise
    path: Path


@dataclass(frozen=True)
class SnippetJob:
    step_id: str
    code: str
    show: str | None
    series: tuple[str, ...]


class Background:
    """One thread that runs jobs in order and hands each result to `post` (an event)."""

    def __init__(self, post: Callable[[Event], None], environ: Mapping[str, str],
                 checker: Callable[[Mapping[str, str]], Checker] = make_checker) -> None:
        self._post = post
        self._environ = environ
        self._make_checker = checker
        self._checker: Checker | None = None
        self._jobs: queue.Queue[CheckJob | SnippetJob | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    def start(self) -> None:
        """Start the thread, and the warm worker if there is one; returns at once. Jobs
        asked for before this wait for it."""
        if self._thread is not None:
            return
        self._checker = self._make_checker(self._environ)
        self._checker.start()
        self._thread = threading.Thread(target=self._run, name="gradtutor-jobs", daemon=True)
        self._thread.start()

    def check(self, exercise: Exercise, path: Path) -> None:
        self._jobs.put(CheckJob(exercise, path))

    def snippet(self, step_id: str, code: str, show: str | None,
                series: tuple[str, ...]) -> None:
        self._jobs.put(SnippetJob(step_id, code, show, series))

    def close(self) -> None:
        """Stop: a running check is ended, queued ones are dropped, nothing more is posted."""
        self._closed.set()
        self._jobs.put(None)
        if self._checker is not None:
            self._checker.close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None and not self._closed.is_set():
            event = self._do(job)
            if not self._closed.is_set():
                self._post(event)

    def _do(self, job: CheckJob | SnippetJob) -> Event:
        assert self._checker is not None
        if isinstance(job, SnippetJob):
            try:
                result = self._checker.run_snippet(job.code, show=job.show, series=job.series)
            except Exception as exc:  # noqa: BLE001 - one failed run must not end the tutor
                return SnippetFailed(job.step_id, msg("The code could not be run ({error}).",
                                                      error=_error(exc)))
            return SnippetDone(job.step_id, result)
        exercise_id = job.exercise.id
        try:
            verdict = self._checker.check(job.exercise, job.path, seed=secrets.randbelow(2**31))
        except GradtutorError as exc:
            return CheckFailed(exercise_id, (
                msg("Could not check: {problem} ({hint}).", problem=exc.message, hint=exc.hint)
                if exc.hint else msg("Could not check: {problem}.", problem=exc.message)))
        except Exception as exc:  # noqa: BLE001 - one failed check must not end the tutor
            return CheckFailed(exercise_id, msg(
                "The check itself failed ({error}); c tries again, `gradtutor check` shows "
                "more.", error=_error(exc)))
        return CheckDone(exercise_id, verdict)



def _error(exc: Exception) -> str:
    """An exception as `Kind: message` (data, in English as Python said it), without the
    full stop that the sentence around it supplies."""
    text = str(exc).rstrip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
