"""What grading a class costs: `gradtutor grade` on a synthetic class, next to checking the
same files one by one, cold (issue 12).

    python benchmarks/grade.py [--students 30] [--exercises 8] [--jobs N] [--cold-per-group 2]

Makes a class of STUDENTS x EXERCISES files (the first EXERCISES of the grad lesson's; the
other lessons' files are not handed in, which `grade` reports at no cost): in turn a
student hands in every reference solution, or each exercise's declared mistakes (a different
mutant for each student), and every fifth student hands in hostile files from tests/hostile/
for read-grad (a loop that never ends, an output flood, a segfault, a detached grandchild).
Runs `gradtutor grade` on it once (a subprocess, as a teacher runs it) and prints the wall
time, checks per second and the peak memory of the grader and its workers together (the sum
of their proportional set sizes, Pss, sampled from /proc every 50 ms). Then runs `gradtutor
check EXERCISE FILE` cold, one subprocess per file, on up to COLD_PER_GROUP files of each
group (an exercise's files; each kind of hostile file, which costs its own time limit),
drawn at random (fixed seed), and estimates the one-by-one time for the whole class group by
group, saying so; it also checks that each sampled file's cold verdict is the one `grade`
gave. Then grades the same class with a reference solution in place of each hostile file, to show
what the files that hang cost: each costs its own time limit in one job, however fast the
rest is. Target: at least 50x faster than one by one, cold, on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import apply_edits
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

HOSTILE = Path(__file__).resolve().parents[1] / "tests" / "hostile"
HOSTILE_FILES = ("infinite_loop.py", "output_flood.py", "segfault.py", "setsid_grandchild.py")
TARGET_RATIO = 50.0
SEED = 12345


def make_class(folder: Path, students: int, exercise_count: int,
               hostile: bool = True) -> tuple[list[str], dict[tuple[str, str], str]]:
    """Write the class; the exercise ids graded, and each file's group: its exercise, or the
    hostile file it is a copy of. Without `hostile`, those students hand in the reference."""
    (lesson,) = [lesson for lesson in load_course(rules=EXERCISE_RULES).lessons
                 if lesson.id == "grad"]
    exercises = [step for step in lesson.steps if isinstance(step, Exercise)][:exercise_count]
    groups: dict[tuple[str, str], str] = {}
    for n in range(students):
        student = folder / f"student-{n + 1:02d}"
        student.mkdir(parents=True)
        for exercise in exercises:
            if n % 2 == 0 or not exercise.mutants:
                source = exercise.solution
            else:
                source = apply_edits(exercise.solution, exercise, n % len(exercise.mutants))
            (student / f"{exercise.id}.py").write_text(source, encoding="utf-8")
            groups[(student.name, exercise.id)] = exercise.id
        if hostile and n % 5 == 2 and exercises and exercises[0].id == "read-grad":
            copied = HOSTILE / HOSTILE_FILES[(n // 5) % len(HOSTILE_FILES)]
            shutil.copyfile(copied, student / "read-grad.py")
            groups[(student.name, "read-grad")] = copied.stem
    return [e.id for e in exercises], groups


def tree_rss_kib(root: int) -> int:
    """Memory of `root` and every process below it (their Pss), from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError, ValueError):
            continue
        pid, parent = int(entry), int(fields[1])
        children.setdefault(parent, []).append(pid)
        rss[pid] = proportional_kib(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def proportional_kib(pid: int) -> int:
    """A process's proportional set size (Pss): its share of pages it shares with others (a
    fork server's children share most of torch with it), so a sum over processes is not
    counted twice; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def grade(folder: Path, jobs: int, env: dict[str, str]) -> tuple[float, int, dict[str, object]]:
    """Wall seconds, peak KiB of the grader's tree, and the JSON report."""
    argv = [sys.executable, "-m", "gradtutor", "grade", str(folder), "--json",
            "--seed", str(SEED), "--jobs", str(jobs)]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env)
        peak = 0
        done = threading.Event()

        def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss_kib(proc.pid))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        _, err = proc.communicate()
        took = time.perf_counter() - started
        done.set()
        watcher.join()
        if proc.returncode != 0:
            sys.exit(f"gradtutor grade failed ({proc.returncode}):\n{err.decode()}")
        out.seek(0)
        return took, peak, json.loads(out.read())


def cold_check(path: Path, exercise: str, env: dict[str, str]) -> tuple[float, str]:
    """Seconds of `gradtutor check EXERCISE FILE` in a subprocess, and the verdict's status."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gradtutor", "check", exercise, str(path),
                           "--json", "--seed", str(SEED)], env=env, capture_output=True,
                          check=False)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"gradtutor check {exercise} {path} failed ({done.returncode}):\n"
                 f"{done.stderr.decode()}")
    return took, json.loads(done.stdout)["status"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--exercises", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cold-per-group", type=int, default=2,
                        help="files of each group checked cold, one by one (the rest of the "
                             "group is extrapolated from them)")
    args = parser.parse_args()
    env = {**os.environ, "GRADTUTOR_LANG": "en"}
    with tempfile.TemporaryDirectory(prefix="gradtutor-bench-grade-") as tmp:
        folder = Path(tmp) / "class"
        ids, groups = make_class(folder, args.students, args.exercises)
        env["GRADTUTOR_HOME"] = str(Path(tmp) / "home")
        checks = args.students * len(ids)
        wall, peak, report = grade(folder, args.jobs, env)
        students = cast("list[dict[str, Any]]", report["students"])
        graded = {(s["student"], e["exercise"]): e["status"] for s in students
                  for e in s["exercises"] if (s["student"], e["exercise"]) in groups}
        members: dict[str, list[tuple[str, str]]] = {}
        for pair in sorted(graded):  # the files handed in; the rest are not checked
            members.setdefault(groups[pair], []).append(pair)
        draw = random.Random(SEED)
        one_by_one, measured, disagree = 0.0, 0, []
        means: dict[str, float] = {}
        for group, pairs in members.items():
            times = []
            for student, exercise in draw.sample(pairs, min(args.cold_per_group, len(pairs))):
                took, status = cold_check(folder / student / f"{exercise}.py", exercise, env)
                times.append(took)
                if status != graded[(student, exercise)]:
                    disagree.append(f"{student}/{exercise}: grade "
                                    f"{graded[(student, exercise)]}, cold {status}")
            means[group] = statistics.mean(times)
            one_by_one += means[group] * len(pairs)
            measured += len(times)
        # the same class with a reference solution for each hostile file: what a class whose
        # files all end in time costs (the cold figure from the exercises' groups above)
        clean = Path(tmp) / "clean"
        make_class(clean, args.students, args.exercises, hostile=False)
        clean_wall, clean_peak, _ = grade(clean, args.jobs, env)
        clean_one_by_one = sum(means[exercise] for _, exercise in graded)
    ratio = one_by_one / wall
    clean_ratio = clean_one_by_one / clean_wall
    passed = sum(status == "pass" for status in graded.values())
    print(f"gradtutor grade, {args.students} students x {len(ids)} exercises = {checks} checks "
          f"({passed} pass), --jobs {args.jobs}; {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, torch {version('torch')}")
    rows = [
        ("grade: wall time", f"{wall:.1f} s"),
        ("grade: checks per second", f"{checks / wall:.1f}"),
        ("grade: peak memory (Pss), grader and workers", f"{peak / 1024:.0f} MiB"),
        (f"cold `gradtutor check`, mean of the {checks} (estimated)",
         f"{one_by_one / checks:.2f} s"),
        (f"one by one, cold: the {checks} files in turn (estimated)", f"{one_by_one:.0f} s"),
        ("one by one, cold / grade", f"{ratio:.1f}x"),
        ("the same class, each hostile file replaced by the reference:", ""),
        ("  grade: wall time", f"{clean_wall:.1f} s"),
        ("  grade: peak memory (Pss), grader and workers", f"{clean_peak / 1024:.0f} MiB"),
        ("  one by one, cold (estimated from the same groups)", f"{clean_one_by_one:.0f} s"),
        ("  one by one, cold / grade", f"{clean_ratio:.1f}x"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value:>10}")
    print(f"The cold figure is estimated group by group (each exercise's files, each kind of "
          f"hostile file): {measured} of the {checks} files, up to {args.cold_per_group} a "
          f"group drawn at random (seed {SEED}), were checked cold, one by one, and each group "
          f"counts the mean of its own times once per file.")
    if disagree:
        print("Cold and grade verdicts differ:\n  " + "\n  ".join(disagree))
        sys.exit(1)
    print(f"Cold and grade verdicts agree on every sampled file. Target {TARGET_RATIO:.0f}x: "
          f"{'met' if ratio >= TARGET_RATIO else 'not met'} on the class with hostile files, "
          f"{'met' if clean_ratio >= TARGET_RATIO else 'not met'} without them.")


if __name__ == "__main__":
    main()
