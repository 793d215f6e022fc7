"""What proves a lesson (`gradtutor validate`): every exercise and answer key, run.

For each exercise: the starter must not pass, the reference solution must pass, and each
mutant must fail on the check it names. Quiz snippets must run, and each quiz choice's proof
must hold exactly when the answer key marks the choice correct. A predict step's snippet must
show the text of its correct choice. A demo's code must run and leave every series its chart
names; a Parsons step's correct order (already proven by the loader's grading) must run as
its assembled loop and leave its series. Deciding is pure (`problem_text`) and happens here;
running the author's code is gradtutor.runtime.proofs': one batch worker process, started as a
learner's worker is and running each request as a learner's worker does (its limits, within
the walls).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradtutor.checking import protocol, results
from gradtutor.checking.check import FILE_BUDGET, MEMORY_BUDGET
from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.mistakes import mutant_source
from gradtutor.checking.outcome import case_error_check, judged, learner_error_check
from gradtutor.checking.snippet import read_series
from gradtutor.checking.verdict import Check, overall
from gradtutor.lessons.load import Loc
from gradtutor.lessons.model import (
    LETTERS,
    Demo,
    Exercise,
    Lesson,
    Parsons,
    Predict,
    Question,
    Quiz,
    Slide,
    Step,
)
from gradtutor.lessons.parsons import assembled, run_series

SEEDS = tuple(range(8))
# Each proof may run this many times its exercise's own time limit (a snippet: the tutor's),
# so that a slow machine is no false alarm and a loop that never ends is found in seconds.
PROOF_TIMES = 3
SNIPPET_TIMEOUT_S = 20.0  # what the walkthrough gives a snippet (runtime.run.run_snippet)


@dataclass(frozen=True)
class Job:
    """One run of author code, and what it must show."""

    lesson_path: Path
    loc: Loc  # where in the lesson file a problem is reported
    what: str  # "the starter", "mutant 'no-backward'", ...
    expect: str  # "pass", "not-pass", "fails:<check>", "runs", "shows", "series"
    request: dict[str, Any]
    shows: str = ""
    series: tuple[str, ...] = ()  # for "series": the variables that must hold numbers
    step: str = ""  # the id of the step proved
    limit: float = PROOF_TIMES * SNIPPET_TIMEOUT_S  # seconds this run may take
    exercise: Exercise | None = None  # the exercise proved, whose judge decides
    runs_first: Loc | None = None  # the run whose code this one runs first (a quiz proof's)

    def name(self) -> str:
        """Which proof this is, for a progress line: `square-grad: mutant 'no-backward'`."""
        seed = self.request.get("seed")
        return f"{self.step}: {self.what}" + (f" (seed {seed})" if seed is not None else "")


def apply_edits(solution: str, exercise: Exercise, mutant_index: int) -> str:
    """`solution` with mutant `mutant_index`'s edits applied (`mistakes.mutant_source`)."""
    if solution != exercise.solution:
        exercise = dataclasses.replace(exercise, solution=solution)
    return mutant_source(exercise, mutant_index)


# what a learner's check or snippet may use, and so each proof
LIMITS = {"memory_bytes": MEMORY_BUDGET, "file_bytes": FILE_BUDGET}


def snippet(code: str, *, show: str | None = None, series: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request of a snippet proved: the one a lesson's snippet runs (`run_snippet`)."""
    return dict(protocol.snippet_request(code=code, show=show, series=series, **LIMITS))


def _exercise_jobs(lesson: Lesson, path: Path, i: int, step: Exercise) -> Iterator[Job]:
    """On each seed: the starter must not pass, the solution must, each mutant must fail."""
    def job(loc: Loc, what: str, expect: str, source: str, seed: int) -> Job:
        return Job(path, loc, what, expect, dict(protocol.check_request(
            checker=request_checker(step), function=step.function, source=source,
            filename=f"{step.id}.py", seed=seed, **LIMITS)),
            step=step.id, limit=PROOF_TIMES * step.timeout, exercise=step)

    for seed in SEEDS:
        yield job(("steps", i, "starter"), "the starter", "not-pass", step.starter, seed)
        yield job(("steps", i, "solution"), "the solution", "pass", step.solution, seed)
        for m, mutant in enumerate(step.mutants):
            yield job(("steps", i, "mutants", m), f"mutant '{mutant.id}'",
                      f"fails:{mutant.fails}", apply_edits(step.solution, step, m), seed)


def _quiz_jobs(lesson: Lesson, path: Path, i: int, step: Quiz) -> Iterator[Job]:
    """Each question's code must run, and each choice's proof hold as the key says."""
    for q, question in enumerate(step.questions):
        if question.code:
            yield Job(path, ("steps", i, "questions", q, "code"),
                      f"the code of question '{question.id}'", "runs",
                      snippet(question.code), step=step.id)
        yield from _proof_jobs(lesson, path, step, ("steps", i, "questions", q), question)


def _predict_jobs(lesson: Lesson, path: Path, i: int, step: Predict) -> Iterator[Job]:
    """The snippet must show the text of the correct choice."""
    correct = step.choices[LETTERS.index(step.answer)].text
    yield Job(path, ("steps", i, "code"), f"the snippet of '{step.id}'", "shows",
              snippet(step.code, show=step.show), shows=correct.strip(), step=step.id)


def _demo_jobs(lesson: Lesson, path: Path, i: int, step: Demo) -> Iterator[Job]:
    """The code must run and leave every series its chart names."""
    names = step.chart.series if step.chart is not None else ()
    yield Job(path, ("steps", i, "code"), f"the code of demo '{step.id}'",
              "series" if names else "runs", snippet(step.code, series=names),
              series=names, step=step.id)


def _parsons_jobs(lesson: Lesson, path: Path, i: int, step: Parsons) -> Iterator[Job]:
    """The correct order must run as its assembled loop and leave its series."""
    if step.run is not None:
        names = run_series(step)
        yield Job(path, ("steps", i, "run"), f"the loop of '{step.id}' in its correct order",
                  "series", snippet(assembled(step, step.solution_order), series=names),
                  series=names, step=step.id)


def _no_jobs(lesson: Lesson, path: Path, i: int, step: Slide) -> Iterator[Job]:
    """A slide claims nothing that runs."""
    return iter(())


# What proves each kind of step (tests/test_step_kinds.py checks every kind has an entry).
PROOFS: dict[type[Step], Callable[[Lesson, Path, int, Any], Iterator[Job]]] = {
    Slide: _no_jobs, Quiz: _quiz_jobs, Exercise: _exercise_jobs, Predict: _predict_jobs,
    Parsons: _parsons_jobs, Demo: _demo_jobs}


def jobs_for(lesson: Lesson, path: Path) -> Iterator[Job]:
    """Every run that proves something about this lesson."""
    for i, step in enumerate(lesson.steps):
        yield from PROOFS[type(step)](lesson, path, i, step)


def _proof_jobs(lesson: Lesson, path: Path, step: Quiz, loc: Loc,
                question: Question) -> Iterator[Job]:
    """One run per choice that has a proof: the question's code, then the proof's, then its
    `holds`, which must be true exactly for the choices the answer key marks correct."""
    for c, choice in enumerate(question.choices):
        if choice.proof is None:
            continue
        yield Job(path, loc + ("choices", c, "proof"),
                  f"lesson '{lesson.id}', question '{question.id}', choice {LETTERS[c]}: "
                  f"its proof", "holds" if c in question.correct else "does-not-hold",
                  {"kind": "proof", "code": question.code or "",
                   "proof": choice.proof.code or "", "holds": choice.proof.holds, **LIMITS},
                  step=step.id, runs_first=loc + ("code",) if question.code else None)


def checks_from(job: Job, messages: list[Any]) -> list[Check]:
    """The checks a run produced (its messages read as a learner's run's are), decided by the
    same functions that judge a learner's run."""
    read = results.check_messages(messages)
    function = job.request["function"]
    final = read.final
    if final is not None and final["type"] == "learner_error":
        return [learner_error_check(final, function, None)]
    if read.expected is None or final is None or final["type"] != "observed":
        return [Check("runs", "error", "the run ended without results")]
    failed = case_error_check(final["observed"], function, None)
    if failed is not None:
        return [failed]
    assert job.exercise is not None  # an exercise's job
    return judged(judge_of(job.exercise), read.expected, final["observed"])


def problem_text(job: Job, result: dict[str, Any]) -> str | None:
    """Why `result` disproves `job`, or None if it proves it."""
    seed = job.request.get("seed")
    if "skipped" in result:
        return None
    if "timeout" in result:
        where = (f"{job.what} of exercise '{job.step}' (seed {seed})" if seed is not None
                 else f"{job.what} in step '{job.step}'")
        return (f"{where} did not finish within {job.limit:g} s "
                f"({PROOF_TIMES} times its time limit); does it loop forever?")
    if job.expect in ("holds", "does-not-hold"):
        return _proof_problem(job, result)
    if job.expect in ("runs", "shows", "series"):
        if "error" in result:
            return f"{job.what} does not run: {result['error']}"
        if job.expect == "shows" and result.get("shown") != job.shows:
            return (f"{job.what} shows {result.get('shown')!r}, but the answer key's choice "
                    f"says {job.shows!r}; fix the answer or the choice text")
        if job.expect == "series":
            return _series_problem(job, result.get("series"))
        return None
    checks = checks_from(job, result.get("messages", []))
    passed = overall(tuple(checks)) == "pass"
    failed = [c for c in checks if c.status not in ("pass", "skip")]
    if job.expect == "pass" and not passed:
        first = failed[0]
        return f"{job.what} does not pass (seed {seed}): {first.name}: {first.message}"
    if job.expect == "not-pass" and passed:
        return f"{job.what} already passes (seed {seed}); a starter must leave work to do"
    if job.expect.startswith("fails:"):
        name = job.expect.split(":", 1)[1]
        if passed:
            return f"{job.what} passes (seed {seed}), so no check catches this mistake"
        if not any(c.name == name for c in failed):
            caught = ", ".join(sorted({c.name for c in failed}))
            return (f"{job.what} should fail check '{name}' but fails {caught} (seed {seed}); "
                    f"name one of those in `fails:`")
    return None


def _proof_problem(job: Job, result: dict[str, Any]) -> str | None:
    """Why a quiz choice's proof disagrees with the answer key, or does not run."""
    if "error" in result:
        if result.get("in") == "code":
            return None  # the question's own code failed: its run says so, once
        return f"{job.what} does not run: {result['error']}"
    held = result.get("holds")
    if not isinstance(held, bool):
        return f"{job.what} ran, but the batch worker sent back no verdict from it"
    if held and job.expect == "does-not-hold":
        return (f"{job.what} holds (True) but the answer key marks it wrong; fix the key or "
                f"the choice")
    if not held and job.expect == "holds":
        return (f"{job.what} does not hold (False) but the answer key marks it right; fix the "
                f"key or the choice")
    return None


def _series_problem(job: Job, found: Any) -> str | None:
    """Why the series a run left (`{name: [floats] or what it is instead}`) cannot be drawn:
    read as the tutor reads them, and, stricter than the tutor, none may be empty."""
    values, fault = read_series(found, job.series)
    if fault is None:
        empty = [name for name, numbers in values if not numbers]
        return f"{job.what} leaves `{empty[0]}` empty: there is nothing to show" if empty else None
    if fault.name is None:
        return f"{job.what} ran, but the batch worker sent back no series from it"
    if fault.holds is None:
        return f"{job.what} leaves no variable `{fault.name}`; make the code set it to a list"
    return f"{job.what} leaves `{fault.name}` as {fault.holds}, not a list of numbers"


