"""The walkthrough's background work: checks and lesson snippets run one at a time in a
thread, each result posted back as news, so the key loop never waits for them.

They are run by a `gradtutor.runtime.checker.Checker`: the warm worker where it is there and
enabled, else a fresh worker process per check. Either way torch is never imported here.
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise
from gradtutor.records import record
from gradtutor.runtime.checker import Checker, make_checker
from gradtutor.walk.events import (
    CheckDone,
    CheckFailed,
    CheckWaiting,
    News,
    SnippetDone,
    SnippetFailed,
)


@record
class CheckJob:
    exercise: Exercise
    path: Path


@record
class SnippetJob:
    step_id: str
    code: str
    show: str | None
    series: tuple[str, ...]


class Ticker:
    """Calls `tick` with the whole seconds since `start` (0 at once, then 1, 2, ...) in a
    thread of its own, until `stop`, after which it calls it no more."""

    def __init__(self, tick: Callable[[int], None]) -> None:
        self._tick = tick
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gradtutor-ticker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        began = time.monotonic()
        seconds = 0
        while not self._stopped.is_set():
            self._tick(seconds)
            seconds += 1
            # on each whole second since the start, however long `tick` took
            if self._stopped.wait(max(0.0, began + seconds - time.monotonic())):
                return


class Background:
    """One thread that runs jobs in order and hands each result to `post` (as news). The
    checker is made from `environ` by `checker`, when the thread starts. With `waits`, a
    check that must wait for the worker to load PyTorch is announced first, and each second
    while it waits (CheckWaiting): for a screen redrawn in place, not for a transcript."""

    def __init__(self, post: Callable[[News], None], environ: Mapping[str, str],
                 checker: Callable[[Mapping[str, str]], Checker] = make_checker,
                 waits: bool = False) -> None:
        self._post = post
        self._environ = environ
        self._make_checker = checker
        self._waits = waits
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
            self._news(self._do(job))

    def _do(self, job: CheckJob | SnippetJob) -> News:
        assert self._checker is not None
        if isinstance(job, SnippetJob):
            try:
                result = self._checker.run_snippet(job.code, show=job.show, series=job.series)
            except Exception as exc:  # noqa: BLE001 - one failed run must not end the tutor
                return SnippetFailed(job.step_id, msg("The code could not be run ({error}).",
                                                      error=_error(exc)))
            return SnippetDone(job.step_id, result)
        exercise_id = job.exercise.id
        ticker = None
        if self._waits and self._checker.loading():
            ticker = Ticker(lambda seconds: self._news(CheckWaiting(exercise_id, seconds)))
            ticker.start()
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
        finally:
            if ticker is not None:
                ticker.stop()  # before the verdict is posted: no tick comes after it
        return CheckDone(exercise_id, verdict)

    def _news(self, news: News) -> None:
        if not self._closed.is_set():
            self._post(news)


def _error(exc: Exception) -> str:
    """An exception as `Kind: message` (data, in English as Python said it), without the
    full stop that the sentence around it supplies."""
    text = str(exc).rstrip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
