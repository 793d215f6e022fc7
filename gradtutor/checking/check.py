"""The check pipeline, for every engine: the learner's file read by the tutor, the request
built, the request run (`run`, which an engine of gradtutor.runtime gives), and what came back
decided (`outcome.decide`) and named (`mistakes`) into a Verdict. Nothing here starts a process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gradtutor.checking import protocol
from gradtutor.checking.checkers import CHECKERS, judge_of, request_checker
from gradtutor.checking.mistakes import name_known_mistake
from gradtutor.checking.outcome import GiB, MiB, WorkerRun, decide, source_problem
from gradtutor.checking.snippet import SnippetResult, snippet_result
from gradtutor.checking.verdict import Check, Verdict, overall
from gradtutor.errors import GradtutorError
from gradtutor.files import FileTooLarge
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise, Parsons
from gradtutor.workspace import MAX_FILE_BYTES, read_exercise_file

MEMORY_BUDGET = 2 * GiB  # address space learner code may add to the worker's (Linux)


FILE_BUDGET = 64 * MiB  # the largest file learner code may write (POSIX)


RESULTS_CAP = 8 * MiB  # result-channel bytes accepted


MAX_SOURCE_BYTES = MAX_FILE_BYTES


STARTUP_ALLOWANCE = 120.0  # seconds to import torch before learner code runs; not theirs


def check_with(run: RunWorker, exercise: Exercise, path: Path, *, seed: int,
               timeout: float | None) -> Verdict:
    """`run_check`, with the worker run by `run` (a cold worker, or a warm one)."""
    started = time.monotonic()
    limit = exercise.timeout if timeout is None else timeout
    if not exercise.declared and exercise.checker not in CHECKERS:
        raise GradtutorError(msg("exercise {exercise} names an unknown checker '{checker}'",
                                 exercise=exercise.id, checker=exercise.checker),
                             msg("`gradtutor validate` lists what is wrong with the lesson"))
    try:
        raw = read_learner_file(path)
    except FileTooLarge as exc:  # judged unread, as any file too large to check
        raw, size = b"", exc.size
    else:
        size = len(raw)
    problem = source_problem(raw, str(path), exercise.function, MAX_SOURCE_BYTES, size=size)
    if problem is not None:
        return Verdict(exercise.id, "error", (problem,), seed, _ms_since(started))
    source = raw.decode("utf-8-sig")
    request = protocol.check_request(
        checker=request_checker(exercise), function=exercise.function, source=source,
        filename=str(path), seed=seed, memory_bytes=MEMORY_BUDGET, file_bytes=FILE_BUDGET)
    worker_run, seen = run(request, limit)
    checks = (stopped_check(exercise.id),) if seen.stopped else name_known_mistake(
        exercise, source, decide(
            worker_run, judge_of(exercise), function=exercise.function, timeout=limit,
            startup_allowance=STARTUP_ALLOWANCE, results_cap=RESULTS_CAP))
    return Verdict(exercise.id, overall(checks), checks, seed, _ms_since(started),
                   output=seen.output, output_truncated=seen.dropped > 0,
                   extra={"startup_ms": seen.startup_ms, "exit_code": worker_run.returncode,
                          "output_dropped_bytes": seen.dropped})


def snippet_with(run: RunWorker, code: str, *, show: str | None, series: tuple[str, ...],
                 timeout: float) -> SnippetResult:
    """`run_snippet`, with the worker run by `run`."""
    started = time.monotonic()
    request = protocol.snippet_request(code=code, show=show, series=series,
                                       memory_bytes=MEMORY_BUDGET, file_bytes=FILE_BUDGET)
    worker_run, seen = run(request, timeout)
    return snippet_result(worker_run, seen.output, series=series, timeout=timeout,
                          startup_allowance=STARTUP_ALLOWANCE,
                          duration_ms=_ms_since(started), stopped=seen.stopped)


def stopped_check(exercise_id: str) -> Check:
    """The check of a run the tutor ended itself because it was closing (not a crash, not
    the learner's time limit: their code was simply not judged)."""
    return Check("stopped", "error",
                 msg("The check was stopped because the tutor was closing, so your code was "
                     "not judged."),
                 msg("check it again: gradtutor check {exercise}", exercise=exercise_id))


def check_order_file(step: Parsons, path: Path) -> Verdict:
    """The verdict on a line-ordering step's answer file; one too large is judged unread."""
    from gradtutor.checking.parsons import MAX_ANSWER_BYTES, grade_file

    try:
        return grade_file(step, read_exercise_file(path, MAX_ANSWER_BYTES), str(path))
    except FileTooLarge as exc:
        return grade_file(step, b"", str(path), size=exc.size)


def read_learner_file(path: Path) -> bytes:
    """The learner's file as bytes, read by the tutor (the worker gets this copy); at most
    MAX_SOURCE_BYTES + 1 of them are read (FileTooLarge beyond), never from a pipe."""
    return read_exercise_file(path, MAX_SOURCE_BYTES)


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


@dataclass(frozen=True)
class Seen:
    """What the tutor kept of a run besides the results: the output and when things began."""

    output: str
    dropped: int
    startup_ms: int | None
    stopped: bool = False  # the tutor ended the run because it was closing (`Workers.stop`)


Outcome = tuple[WorkerRun, Seen]  # all the tutor saw of one run


# How a request is run: `Engine.run`, or a stand-in.
RunWorker = Callable[[protocol.Request, float], Outcome]
