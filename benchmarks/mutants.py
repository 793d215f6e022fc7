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
import ast
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "tests"))

from checker_suite import MutantRun, exercise_mutants, mutant_verdicts  # noqa: E402

from gradtutor.checking.exercise_rules import EXERCISE_RULES  # noqa: E402
from gradtutor.checking.mutation import mutants  # noqa: E402
from gradtutor.lessons.course import load_course  # noqa: E402
from gradtutor.lessons.model import Exercise  # noqa: E402


def pairs_of(exercise: Exercise, count: int) -> list[tuple[str, str, str]]:
    """`count` second-order mutants (two changes), drawn at random but the same each run: a
    wrong file is seldom one change away from the solution."""
    first = mutants(exercise.solution)
    rng = random.Random(exercise.id)
    original = ast.dump(ast.parse(exercise.solution))
    found = []
    for _ in range(count if first else 0):
        one = rng.choice(first)
        # not the change that undoes the first: that is the solution again
        further = [m for m in mutants(one.source) if ast.dump(ast.parse(m.source)) != original]
        if further:
            two = rng.choice(further)
            found.append((f"pair {one.id}+{two.id}", f"{one.description}; {two.description}",
                          two.source))
    return found


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
    began = time.perf_counter()
    runs = [MutantRun(exercise, mutant, change, source, seed) for exercise in chosen
            for mutant, change, source in exercise_mutants(exercise)
            + pairs_of(exercise, args.pairs)
            for seed in range(args.seeds)]
    verdicts = mutant_verdicts(runs, args.tmp, args.processes)
    changes = {(run.exercise.id, run.mutant): run.change for run in runs}
    spent = time.perf_counter() - began
    print(f"{len(runs)} checks ({len(verdicts)} mutants x {args.seeds} seeds) in {spent:.0f} s")
    print(f"{'exercise':26} {'mutants':>7} {'caught':>7} {'passed':>7} {'by seed':>8}")
    totals = [0, 0, 0, 0]
    flagged: list[str] = []
    for exercise in chosen:
        keys = [k for k in verdicts if k[0] == exercise.id]
        caught = [k for k in keys if not any(ok for ok, _ in verdicts[k].values())]
        kept = [k for k in keys if all(ok for ok, _ in verdicts[k].values())]
        mixed = [k for k in keys if k not in caught and k not in kept]
        row = [len(keys), len(caught), len(kept), len(mixed)]
        totals = [t + r for t, r in zip(totals, row, strict=True)]
        print(f"{exercise.id:26} {row[0]:7} {row[1]:7} {row[2]:7} {row[3]:8}")
        for k in mixed:
            good = next(s for s, (ok, _) in verdicts[k].items() if ok)
            bad = next(s for s, (ok, _) in verdicts[k].items() if not ok)
            flagged.append(f"BY SEED {k[0]} {k[1]}: {changes[k]}\n    passes on seed {good}, "
                           f"fails on seed {bad}: {verdicts[k][bad][1][:160]}")
        if args.list:
            flagged += [f"PASSED  {k[0]} {k[1]}: {changes[k]}" for k in kept]
    print(f"{'all':26} {totals[0]:7} {totals[1]:7} {totals[2]:7} {totals[3]:8}")
    print("\n".join(flagged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
