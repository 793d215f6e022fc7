"""The author's safety net: prove every exercise and answer key by running it.

For each exercise: the starter must not pass, the reference solution must pass, and each
mutant must fail on the check it names. Quiz snippets must run, and a predict step's snippet
must show the text of its correct choice. A demo's code must run and leave every series its
chart names; a Parsons step's correct order (already proven by the loader's grading) must run
as its assembled loop and leave its series. Deciding is pure (`problem_text`); running the
author's code happens in one batch worker process (`gradtutor.checking.batch`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradtutor
from gradtutor.checking.checkers import load as load_checker
from gradtutor.checking.outcome import case_error_check, judged, learner_error_check
from gradtutor.checking.parsons import assembled, run_series
from gradtutor.checking.snippet import read_series
from gradtutor.checking.verdict import Check, overall
from gradtutor.errors import Problem
from gradtutor.lessons.load import Loc, display_path, parse_yaml, read_lesson_text
from gradtutor.lessons.model import LETTERS, Demo, Exercise, Lesson, Parsons, Predict, Quiz

SEEDS = (0, 1, 2)
BATCH_TIMEOUT_S = 600


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


def apply_edits(solution: str, exercise: Exercise, mutant_index: int) -> str:
    source = solution
    for edit in exercise.mutants[mutant_index].replace:
        source = source.replace(edit.find, edit.with_, 1)
    return source


def jobs_for(lesson: Lesson, path: Path) -> Iterator[Job]:
    """Every run that proves something about this lesson."""
    for i, step in enumerate(lesson.steps):
        if isinstance(step, Exercise):
            def job(loc: Loc, what: str, expect: str, source: str, seed: int,
                    step: Exercise = step) -> Job:
                return Job(path, loc, what, expect, {
                    "kind": "exercise", "checker": step.checker, "function": step.function,
                    "source": source, "filename": f"{step.id}.py", "seed": seed})

            for seed in SEEDS:
                yield job(("steps", i, "starter"), "the starter", "not-pass", step.starter, seed)
                yield job(("steps", i, "solution"), "the solution", "pass", step.solution, seed)
                for m, mutant in enumerate(step.mutants):
                    yield job(("steps", i, "mutants", m), f"mutant '{mutant.id}'",
                              f"fails:{mutant.fails}", apply_edits(step.solution, step, m), seed)
        elif isinstance(step, Quiz):
            for q, question in enumerate(step.questions):
                if question.code:
                    yield Job(path, ("steps", i, "questions", q, "code"),
                              f"the code of question '{question.id}'", "runs",
                              {"kind": "snippet", "code": question.code})
        elif isinstance(step, Predict):
            correct = step.choices[LETTERS.index(step.answer)].text
            yield Job(path, ("steps", i, "code"), f"the snippet of '{step.id}'", "shows",
                      {"kind": "snippet", "code": step.code, "show": step.show},
                      shows=correct.strip())
        elif isinstance(step, Demo):
            names = step.chart.series if step.chart is not None else ()
            yield Job(path, ("steps", i, "code"), f"the code of demo '{step.id}'",
                      "series" if names else "runs",
                      {"kind": "snippet", "code": step.code, "series": list(names)},
                      series=names)
        elif isinstance(step, Parsons) and step.run is not None:
            names = run_series(step)
            yield Job(path, ("steps", i, "run"), f"the loop of '{step.id}' in its correct order",
                      "series", {"kind": "snippet", "code": assembled(step, step.solution_order),
                                 "series": list(names)}, series=names)


def checks_from(job: Job, messages: list[dict[str, Any]]) -> list[Check]:
    """The checks a run produced, decided by the same functions that judge a learner's run."""
    by_type = {m.get("type"): m for m in messages}
    function = job.request["function"]
    if "learner_error" in by_type:
        return [learner_error_check(by_type["learner_error"], function, None)]
    expected, observed = by_type.get("expected"), by_type.get("observed")
    if expected is None or observed is None:
        return [Check("runs", "error", "the run ended without results")]
    failed = case_error_check(observed["observed"], function, None)
    if failed is not None:
        return [failed]
    return judged(load_checker(job.request["checker"]).judge, expected, observed["observed"])


def problem_text(job: Job, result: dict[str, Any]) -> str | None:
    """Why `result` disproves `job`, or None if it proves it."""
    seed = job.request.get("seed")
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


def run_jobs(jobs: list[Job]) -> list[dict[str, Any]]:
    """Run every job in one batch worker; one result per job."""
    if not jobs:
        return []
    with tempfile.TemporaryDirectory(prefix="gradtutor-validate-") as folder:
        request = Path(folder) / "jobs.json"
        request.write_text(json.dumps([job.request for job in jobs]), encoding="utf-8")
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join(
                   [str(Path(gradtutor.__file__).resolve().parents[1]),
                    os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-m", "gradtutor.checking.batch", str(request)],
                              cwd=folder, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=BATCH_TIMEOUT_S)
    results: dict[int, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line)
            results[int(record["job"])] = record
        except (ValueError, KeyError, TypeError):
            continue
    reason = (done.stderr.strip().splitlines() or ["it stopped early"])[-1]
    return [results.get(n, {"error": f"the batch worker did not finish ({reason})",
                            "messages": []}) for n in range(len(jobs))]


def prove(lessons: list[tuple[Lesson, Path]]) -> list[Problem]:
    """Run every proof for these lessons; the located problems found."""
    jobs = [job for lesson, path in lessons for job in jobs_for(lesson, path)]
    results = run_jobs(jobs)
    positions: dict[Path, Any] = {}
    problems: list[Problem] = []
    seen: set[tuple[Path, Loc, str]] = set()
    for job, result in zip(jobs, results, strict=True):
        text = problem_text(job, result)
        if text is None or (job.lesson_path, job.loc, job.what) in seen:
            continue
        seen.add((job.lesson_path, job.loc, job.what))  # one line per thing, not per seed
        if job.lesson_path not in positions:
            source, _ = read_lesson_text(job.lesson_path)
            parsed, _ = parse_yaml(source or "", display_path(job.lesson_path))
            positions[job.lesson_path] = parsed
        parsed = positions[job.lesson_path]
        line, col = parsed.position(job.loc) if parsed else (1, 1)
        problems.append(Problem(display_path(job.lesson_path), line, col, text))
    return problems
