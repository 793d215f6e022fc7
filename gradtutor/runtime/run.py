"""A check or a snippet run on an engine: the check pipeline (`checking.check`), given the
engine's `run` (a cold one, `ColdEngine`, or a warm one)."""

from __future__ import annotations

from pathlib import Path

from gradtutor.checking import protocol
from gradtutor.checking.check import Outcome, RunWorker, check_with, snippet_with
from gradtutor.checking.snippet import SnippetResult
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.engine import Engine
from gradtutor.runtime.signals import cleanup_before_termination


def run_check(exercise: Exercise, path: Path, *, seed: int, engine: Engine,
              timeout: float | None = None) -> Verdict:
    """Check the learner's file `path` against `exercise`'s checker, on inputs from `seed`,
    on `engine` (`ColdEngine(environ=...)`: a cold worker of its own).

    `timeout` (default: the exercise's) is the time the learner's code may run; the worker's
    start-up (importing torch, computing references) is not counted. A missing or unreadable
    file raises GradtutorError; every other problem, down to a crash, is a failed Verdict.
    Checks run from several threads at once share one engine (or one `Workers`)."""
    return check_with(guarded(engine.run), exercise, path, seed=seed, timeout=timeout)


def run_snippet(code: str, *, show: str | None = None, series: tuple[str, ...] = (),
                engine: Engine, timeout: float = 20.0) -> SnippetResult:
    """Run a lesson's snippet (a predict or demo step) on `engine`, isolated and timed like a
    check; `show` is an expression whose str() is wanted afterwards, `series` the variables
    wanted as numbers."""
    return snippet_with(engine.run, code, show=show, series=series, timeout=timeout)


def guarded(run: RunWorker) -> RunWorker:
    """`run`, during which the tutor's SIGTERM or SIGHUP becomes an exception that ends the run
    and cleans up after it (`cleanup_before_termination`)."""
    def run_guarded(request: protocol.Request, timeout: float) -> Outcome:
        with cleanup_before_termination():
            return run(request, timeout)

    return run_guarded
