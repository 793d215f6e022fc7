"""Does any exercise's verdict depend on the seed? Every first-order mutant of every reference
solution (`gradtutor.checking.mutation`) and every declared mutant, checked on many seeds.

    python benchmarks/mutants.py [--seeds 8] [--exercise ID ...] [--lessons DIR] [--pairs N]
                                 [--list]

A mutant is the solution with one small change, as a learner makes it (`<` for `<=`, `any`
for `all`, a statement dropped, two swapped...). Over the seeds its verdict must be one:
failed on every seed (a mistake caught) or passed on every seed (the change does not change
what the function does: an equivalent mutant). A verdict that differs between two seeds is a
mistake that a learner's luck decides: the goal is none (tests/test_mutant_seeds.py holds the
course to it). Prints, per exercise: mutants generated, caught on every seed, passed on every
seed, seed-dependent (with two seeds that disagree), and the time. `--list` names every
mutant that passed or depends on the seed.

The checks run as the checker tests run them (tests/checker_batch.py: many checks in one
process, under a learner's limits), `--processes` batch workers side by side.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "tests"))

from checker_batch import checks_from  # noqa: E402 - after the path
from checker_suite import describe, passed, run_batches  # noqa: E402

from gradtutor.checking.checkers import judge_of, request_checker  # noqa: E402
from gradtutor.checking.exercise_rules import EXERCISE_RULES  # noqa: E402
from gradtutor.checking.mistakes import mutant_source  # noqa: E402
from gradtutor.checking.mutation import mutants  # noqa: E402
from gradtutor.lessons.course import load_course  # noqa: E402
from gradtutor.lessons.model import Exercise  # noqa: E402


def runs_of(exercise: Exercise, seeds: list[int], pairs: int = 0) -> list[dict[str, Any]]:
    """Every mutant of `exercise` (generated, then declared) on every seed; with `pairs`,
    also that many second-order mutants (two changes), drawn at random but the same each run:
    a wrong file is seldom one change away from the solution."""
    import ast
    import random

    first = mutants(exercise.solution)
    found = [(f"generated {m.id}", m.description, m.source) for m in first]
    rng = random.Random(exercise.id)
    original = ast.dump(ast.parse(exercise.solution))
    for _ in range(pairs if first else 0):
        one = rng.choice(first)
        # not the change that undoes the first: that is the solution again
        further = [m for m in mutants(one.source) if ast.dump(ast.parse(m.source)) != original]
        if further:
            two = rng.choice(further)
            found.append((f"pair {one.id}+{two.id}", f"{one.description}; {two.description}",
                          two.source))
    found += [(f"declared {mutant.id}", mutant.mistake, mutant_source(exercise, i))
              for i, mutant in enumerate(exercise.mutants)]
    return [{"exercise": exercise.id, "mutant": name, "description": description,
             "source": source, "seed": seed}
            for name, description, source in found for seed in seeds]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--exercise", action="append", dest="exercises")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--pairs", type=int, default=0,
                        help="second-order mutants to add per exercise")
    parser.add_argument("--lessons", type=Path, default=None, help="a course folder of yours")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp/gradtutor-mutants"))
    args = parser.parse_args()
    course = load_course(args.lessons, rules=EXERCISE_RULES)
    exercises = course.exercises()
    chosen = [exercises[e] for e in args.exercises] if args.exercises else list(
        exercises.values())
    seeds = list(range(args.seeds))
    began = time.perf_counter()
    runs = [run for exercise in chosen for run in runs_of(exercise, seeds, args.pairs)]

    def job(run: dict[str, Any]) -> dict[str, Any]:
        exercise = exercises[run["exercise"]]
        return {"checker": request_checker(exercise), "function": exercise.function,
                "source": run["source"], "seed": run["seed"], "timeout": 3 * exercise.timeout}

    messages = run_batches(runs, job, args.tmp, args.processes)  # type: ignore[arg-type]
    verdicts: dict[tuple[str, str], dict[int, bool]] = defaultdict(dict)
    evidence: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    described: dict[tuple[str, str], str] = {}
    for run, sent in zip(runs, messages, strict=True):
        exercise = exercises[run["exercise"]]
        key = (run["exercise"], run["mutant"])
        if sent == [{"type": "job-timeout"}]:  # a check past its time limit fails
            verdicts[key][run["seed"]], evidence[key][run["seed"]] = False, "timed out"
        else:
            checks = checks_from(judge_of(exercise), exercise.function, sent)
            verdicts[key][run["seed"]] = passed(checks)
            evidence[key][run["seed"]] = describe(checks)[:160]
        described[key] = run["description"]
    spent = time.perf_counter() - began
    print(f"{len(runs)} checks ({len(verdicts)} mutants x {len(seeds)} seeds) in {spent:.0f} s")
    print(f"{'exercise':26} {'mutants':>7} {'caught':>7} {'passed':>7} {'by seed':>8}")
    totals = [0, 0, 0, 0]
    flagged: list[str] = []
    for exercise in chosen:
        keys = [k for k in verdicts if k[0] == exercise.id]
        caught = [k for k in keys if not any(verdicts[k].values())]
        kept = [k for k in keys if all(verdicts[k].values())]
        mixed = [k for k in keys if k not in caught and k not in kept]
        row = [len(keys), len(caught), len(kept), len(mixed)]
        totals = [t + r for t, r in zip(totals, row, strict=True)]
        print(f"{exercise.id:26} {row[0]:7} {row[1]:7} {row[2]:7} {row[3]:8}")
        for k in mixed:
            good = next(s for s, ok in verdicts[k].items() if ok)
            bad = next(s for s, ok in verdicts[k].items() if not ok)
            flagged.append(f"BY SEED {k[0]} {k[1]}: {described[k]}\n    passes on seed {good}, "
                           f"fails on seed {bad}: {evidence[k][bad]}")
        if args.list:
            flagged += [f"PASSED  {k[0]} {k[1]}: {described[k]}" for k in kept]
    print(f"{'all':26} {totals[0]:7} {totals[1]:7} {totals[2]:7} {totals[3]:8}")
    print("\n".join(flagged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
