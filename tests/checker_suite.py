"""The checker tests' one harness (tests/test_checkers_basic.py, tests/test_checkers_loops.py):
runs of learner files on seeds, run in batch worker processes (tests/checker_batch.py), and
the words the tests use to judge the checks that came back.

Seeds: the default run checks styles, solutions and mutants on DEFAULT_SEEDS; the rest of the
50-seed sweep, SWEEP_SEEDS, runs under the `sweep` marker (pyproject.toml), which the default
run leaves out: `python -m pytest -m sweep` runs it (.ci/run does, after the suite), so every
file is still checked on 50 seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent
from typing import Any, TypeVar

import pytest

from gradtutor.checking.mistakes import mutant_source
from gradtutor.checking.verdict import Check
from gradtutor.lessons.model import Exercise

HERE = Path(__file__).parent
# Five seeds in the default run (ten took the suite past its 8 minutes), the other 45 of the
# 50-seed sweep under the `sweep` marker.
DEFAULT_SEEDS = range(5)
SWEEP_SEEDS = range(5, 50)

# The two seed sets a sweep test runs on, one test each: the default seeds, and the rest of
# the sweep behind the `sweep` marker.
SEED_SETS = [pytest.param("results", id="default"),
             pytest.param("swept", id="sweep", marks=pytest.mark.sweep)]


R = TypeVar("R")  # a run of a batch, as its caller describes it


@dataclass(frozen=True)
class Run:
    label: str
    checker: str
    source: str
    seed: int


def mutated(step: Exercise, index: int) -> str:
    """The exercise's mutant `index`, as the tutor builds it; each edit must find one place."""
    for edit in step.mutants[index].replace:
        assert step.solution.count(edit.find) == 1, (step.mutants[index].id, edit.find)
    return mutant_source(step, index)


def corpus_runs(styles: Mapping[str, Mapping[str, str]], exercises: Mapping[str, str],
                exercise: Callable[[str], Exercise], seeds: Iterable[int]) -> list[Run]:
    """The runs of the sweep: every correct style, each exercise's solution and each of its
    mutants, on `seeds`. `exercises` maps exercise id -> the checker label its runs carry."""
    seeds = list(seeds)
    runs = [Run(f"style:{checker}/{name}", checker, dedent(source), seed)
            for checker, named in styles.items() for name, source in named.items()
            for seed in seeds]
    for exercise_id, checker in exercises.items():
        step = exercise(exercise_id)
        runs += [Run(f"solution:{exercise_id}", checker, step.solution, seed) for seed in seeds]
        runs += [Run(f"mutant:{exercise_id}/{mutant.id}", checker, mutated(step, m), seed)
                 for m, mutant in enumerate(step.mutants) for seed in seeds]
    return runs


def worker_env() -> dict[str, str]:
    """The environment of a batch worker: one thread, and this checkout importable."""
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}


def run_batches(runs: list[R], job: Callable[[R], dict[str, Any]], tmp: Path,
                processes: int = 2) -> list[list[dict[str, Any]]]:
    """Every run's worker messages, in the order of `runs`, from `processes` batch workers
    running side by side; `job` gives a run's job for tests/checker_batch.py."""
    tmp.mkdir(parents=True, exist_ok=True)
    started = []
    for i in range(processes):
        jobs, results = tmp / f"jobs{i}.json", tmp / f"results{i}.json"
        jobs.write_text(json.dumps([job(r) for r in runs[i::processes]]))
        started.append((subprocess.Popen(
            [sys.executable, str(HERE / "checker_batch.py"), str(jobs), str(results)],
            env=worker_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True), results))
    parts: list[list[list[dict[str, Any]]]] = []
    try:
        for process, results in started:
            _, stderr = process.communicate(timeout=900)
            assert process.returncode == 0, stderr[-3000:]
            parts.append(json.loads(results.read_text()))
    finally:
        for process, _ in started:
            if process.poll() is None:
                process.kill()
            process.communicate()
    merged: list[list[dict[str, Any]]] = [[] for _ in runs]
    for i, part in enumerate(parts):
        for j, messages in enumerate(part):
            merged[i + j * processes] = messages
    return merged


def course_exercise(exercise_id: str) -> Exercise:
    """The shipped course's exercise `exercise_id`, as the checker tests check it."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


def checks_of_files(files: Mapping[str, tuple[str, str]], seeds: Iterable[int],
                    folder: Path) -> dict[str, list[list[Check]]]:
    """label -> the checks of each seed's run of its file: `files` maps a label to (exercise
    id, source), each checked in one batch process (in `folder`) and decided as in the tutor."""
    from checker_batch import checks_from, run_in_batch

    from gradtutor.checking.checkers import judge_of, request_checker

    seeds = list(seeds)
    steps = {eid: course_exercise(eid) for eid in {eid for eid, _ in files.values()}}
    runs = [(label, steps[eid], source, seed)
            for label, (eid, source) in files.items() for seed in seeds]
    jobs = [{"checker": request_checker(step), "function": step.function, "source": source,
             "seed": seed} for _, step, source, seed in runs]
    out: dict[str, list[list[Check]]] = {}
    for (label, step, _, _), messages in zip(runs, run_in_batch(jobs, folder), strict=True):
        out.setdefault(label, []).append(checks_from(judge_of(step), step.function, messages))
    return out


def describe(checks: list[Check]) -> str:
    return "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)


def passed(checks: list[Check]) -> bool:
    return bool(checks) and all(c.status == "pass" for c in checks)


def failing(checks: list[Check], name: str) -> Check | None:
    """The check `name`, if it failed."""
    return next((c for c in checks if c.name == name and c.status == "fail"), None)


def not_passing(checks: list[Check], name: str) -> Check | None:
    """The check `name`, if it did not pass (failed, or was not judged)."""
    return next((c for c in checks if c.name == name and c.status != "pass"), None)


def assert_pass_on_every_seed(runs: list[list[Check]], seeds: Iterable[int]) -> None:
    seeds = list(seeds)
    assert len(runs) == len(seeds)
    for seed, checks in zip(seeds, runs, strict=True):
        assert passed(checks), f"seed {seed}: {describe(checks)}"


def assert_fail_on_every_seed(runs: list[list[Check]], seeds: Iterable[int], check: str,
                              found: Callable[[list[Check], str], Check | None] = failing
                              ) -> None:
    seeds = list(seeds)
    assert len(runs) == len(seeds)
    for seed, checks in zip(seeds, runs, strict=True):
        assert found(checks, check), f"seed {seed}: {describe(checks)}"


def seeds_of(fixture: str) -> range:
    """The seeds of a SEED_SETS fixture's runs."""
    return DEFAULT_SEEDS if fixture == "results" else SWEEP_SEEDS


# ---- every small change of a solution (tests/test_mutant_seeds.py, benchmarks/mutants.py) --

TIMED_OUT = [{"type": "job-timeout"}]  # tests/checker_batch.py's word for a job past its limit


@dataclass(frozen=True)
class MutantRun:
    exercise: Exercise
    mutant: str  # the generated mutant's id, "declared:ID", or "pair A+B"
    change: str  # what it changes, for a person
    source: str
    seed: int


def exercise_mutants(exercise: Exercise, declared: bool = True) -> list[tuple[str, str, str]]:
    """(id, what it changes, source) of every first-order mutant of the exercise's solution
    (gradtutor/checking/mutation.py), then (unless `declared` is False) of every mutant its
    lesson declares."""
    from gradtutor.checking.mutation import mutants

    found = [(m.id, m.description, m.source) for m in mutants(exercise.solution)]
    return found + [(f"declared:{mutant.id}", mutant.mistake, mutant_source(exercise, i))
                    for i, mutant in enumerate(exercise.mutants) if declared]


MutantVerdicts = dict[tuple[str, str], dict[int, tuple[bool, str]]]


def mutant_verdicts(runs: list[MutantRun], tmp: Path, processes: int = 2) -> MutantVerdicts:
    """(exercise id, mutant) -> seed -> (passed, the checks in a line): each run checked as
    the tutor checks a learner's file, a run past 3 times its exercise's time limit failed."""
    from gradtutor.checking.checkers import judge_of, request_checker

    def job(run: MutantRun) -> dict[str, Any]:
        return {"checker": request_checker(run.exercise), "function": run.exercise.function,
                "source": run.source, "seed": run.seed, "timeout": 3 * run.exercise.timeout}

    from checker_batch import checks_from

    out: MutantVerdicts = {}
    for run, sent in zip(runs, run_batches(runs, job, tmp, processes), strict=True):
        if sent == TIMED_OUT:
            verdict = (False, "timed out")
        else:
            checks = checks_from(judge_of(run.exercise), run.exercise.function, sent)
            verdict = (passed(checks), describe(checks)[:300])
        out.setdefault((run.exercise.id, run.mutant), {})[run.seed] = verdict
    return out
