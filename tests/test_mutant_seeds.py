"""No verdict depends on the seed: every first-order mutant of every exercise's solution
(gradtutor/checking/mutation.py: one comparison, constant, call or statement changed, as a
learner changes it) and every declared mutant gets the same verdict on each of 50 seeds.
Failed on all is a mistake caught; passed on all is code that does what the solution does,
which the lesson lists under `equivalent:` with why; anything else means a learner's luck
decides the verdict. The declared mutants of the exercises tests/test_checkers_basic.py and
tests/test_checkers_loops.py sweep are proven there, on the same 50 seeds, to fail the very
check they name (a stronger claim), so they are not run twice. Seeds 0-4 run by default,
5-49 under the `sweep` marker (`python -m pytest -m sweep`, as CI runs it): 50 in all
(tests/checker_suite.py's seed sets).
`python benchmarks/mutants.py` prints the same, per exercise.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import test_checkers_basic
import test_checkers_loops
from checker_suite import (
    DEFAULT_SEEDS,
    SWEEP_SEEDS,
    MutantRun,
    MutantVerdicts,
    exercise_mutants,
    mutant_verdicts,
)

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

pytestmark = pytest.mark.slow


# Exercises whose declared mutants the checker tests run on every seed of the sweep.
DECLARED_SWEPT_THERE = frozenset(test_checkers_basic.EXERCISES) | frozenset(
    test_checkers_loops.EXERCISES)


@functools.cache
def exercises() -> dict[str, Exercise]:
    return dict(load_course(None, rules=EXERCISE_RULES).exercises())


def mutants_here(exercise: Exercise) -> list[tuple[str, str, str]]:
    return exercise_mutants(exercise, declared=exercise.id not in DECLARED_SWEPT_THERE)


def verdicts(seeds: range, tmp: Path) -> MutantVerdicts:
    """(exercise, mutant) -> seed -> (passed, the checks in a line)."""
    return mutant_verdicts([MutantRun(exercise, mutant, change, source, seed)
                            for exercise in exercises().values()
                            for mutant, change, source in mutants_here(exercise)
                            for seed in seeds], tmp)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> MutantVerdicts:
    return verdicts(DEFAULT_SEEDS, tmp_path_factory.mktemp("mutants"))


@pytest.fixture(scope="module")
def swept(default: MutantVerdicts, tmp_path_factory: pytest.TempPathFactory) -> MutantVerdicts:
    """All 50 seeds: the default ones and the sweep's."""
    rest = verdicts(SWEEP_SEEDS, tmp_path_factory.mktemp("mutants-sweep"))
    return {key: {**default[key], **rest[key]} for key in default}


def one_verdict(found: MutantVerdicts, exercise_id: str) -> None:
    exercise = exercises()[exercise_id]
    described = {m: d for m, d, _ in mutants_here(exercise)}
    mixed = []
    for (owner, mutant), by_seed in found.items():
        if owner != exercise_id or len({ok for ok, _ in by_seed.values()}) == 1:
            continue
        good = min(s for s, (ok, _) in by_seed.items() if ok)
        bad = min(s for s, (ok, _) in by_seed.items() if not ok)
        mixed.append(f"{exercise_id} {mutant} ({described[mutant]}): passes on seed {good}, "
                     f"fails on seed {bad}: {by_seed[bad][1]}")
    assert not mixed, "the verdict depends on the seed:\n" + "\n".join(mixed)


@pytest.mark.parametrize("exercise_id", sorted(exercises()))
def test_no_mutant_s_verdict_depends_on_the_seed(default: MutantVerdicts, exercise_id: str) -> None:
    one_verdict(default, exercise_id)


@pytest.mark.sweep
@pytest.mark.parametrize("exercise_id", sorted(exercises()))
def test_no_mutant_s_verdict_depends_on_the_seed_over_50_seeds(swept: MutantVerdicts,
                                                               exercise_id: str) -> None:
    one_verdict(swept, exercise_id)


@pytest.mark.parametrize("exercise_id", sorted(exercises()))
def test_what_no_seed_catches_is_listed_as_equivalent_with_why(default: MutantVerdicts,
                                                               exercise_id: str) -> None:
    """A generated mutant that passes on every seed is either code that does what the
    solution does (listed, with why) or a mistake the checks miss (a hole to close); a
    declared mutant must never pass; a listed one must exist and pass."""
    exercise = exercises()[exercise_id]
    passing = {mutant for (owner, mutant), by_seed in default.items()
               if owner == exercise_id and all(ok for ok, _ in by_seed.values())}
    listed = {e.mutant for e in exercise.equivalent}
    described = {m: d for m, d, _ in mutants_here(exercise)}
    assert not {m for m in passing if m.startswith("declared:")}, "a declared mistake passes"
    unlisted = sorted(passing - listed)
    assert not unlisted, "passes on every seed but is not listed under `equivalent:`:\n" + (
        "\n".join(f"{m}: {described[m]}" for m in unlisted))
    assert not listed - passing, f"listed as equivalent but caught (or gone): {listed - passing}"
    assert all(len(e.why.split()) >= 4 for e in exercise.equivalent), "each says why"
