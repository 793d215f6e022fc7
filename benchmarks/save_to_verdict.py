"""How long a save takes to show its verdict, as a learner sees it: from the write of the
exercise file to the verdict drawn on a real terminal.

    python benchmarks/save_to_verdict.py [--runs 6] [--exercise ID ...] [--save write|rename]

For each exercise of the course, `gradtutor watch EXERCISE` runs on a pseudo-terminal (100x40)
whose output feeds a terminal emulator (pyte). Its reference is saved first and the verdict
awaited, which waits for the warm worker to import torch; one mistake (the exercise's first
declared mutant) is saved to warm the rest of the way up. Then, RUNS times each, the reference
and the mistake are saved in turn, PAUSE apart (a learner's saves come seconds apart), and
each is timed from just before the write to the moment the output that draws its verdict (a
new `seed N · M ms` line under the expected ✓ or ✗ heading) arrives from the terminal.
`--save write` writes the file in place (truncate, then write, as `echo > file` and many
editors do); `--save rename` writes a temporary file beside it and renames it over, as vim
and most IDEs do. Prints each exercise's p50 and p95; the target is p50 <= 100 ms and
p95 <= 150 ms for every exercise. POSIX only (needs pexpect and pyte, in the test extras).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pyte

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mistakes import mutant_source
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

TARGET_P50_MS = 100.0
TARGET_P95_MS = 150.0
PAUSE = 0.5  # seconds between a verdict and the next save
FIRST_WAIT = 180.0  # the first check waits for the worker to import torch (slow when busy)
WAIT = 30.0
COLUMNS, ROWS = 100, 40
READY = "each save is checked here"  # the exercise screen is up
SEED = re.compile(r"seed (\d+) · ")


@dataclass
class Terminal:
    """`gradtutor watch` on a pty, its output drawn on an emulated screen."""

    child: pexpect.spawn
    screen: pyte.Screen = field(default_factory=lambda: pyte.Screen(COLUMNS, ROWS))

    def __post_init__(self) -> None:
        self.stream = pyte.ByteStream(self.screen)

    def verdict(self, exercise_id: str) -> tuple[str, str] | None:
        """The verdict on screen: ('✓' or '✗', its seed), or None while there is none."""
        lines = self.screen.display
        for n, line in enumerate(lines):
            text = line.strip()
            if text.startswith(("✓ ", "✗ ")) and text[2:].startswith(f"{exercise_id}: "):
                seed = next((m.group(1) for later in lines[n + 1:n + 3]
                             if (m := SEED.search(later))), None)
                if seed is not None:
                    return text[0], seed
        return None

    def wait_until(self, text: str, timeout: float) -> None:
        """Read output until `text` shows on the screen."""
        end = time.perf_counter() + timeout
        while not any(text in line for line in self.screen.display):
            if time.perf_counter() > end:
                raise SystemExit(f"no {text!r} within {timeout:.0f} s; the screen:\n"
                                 + "\n".join(self.screen.display))
            try:
                self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=0.05))
            except pexpect.TIMEOUT:
                continue

    def wait_for(self, exercise_id: str, mark: str, old_seed: str | None,
                 timeout: float) -> tuple[float, str]:
        """Read output until a new verdict with `mark` is drawn; when its last piece arrived
        (perf_counter) and its seed."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            try:
                data = self.child.read_nonblocking(1 << 16, timeout=0.05)
            except pexpect.TIMEOUT:
                continue
            arrived = time.perf_counter()
            self.stream.feed(data)
            shown = self.verdict(exercise_id)
            if shown is not None and shown[1] != old_seed:
                if shown[0] != mark:
                    raise SystemExit(f"{exercise_id}: expected {mark}, the screen shows:\n"
                                     + "\n".join(self.screen.display))
                return arrived, shown[1]
        raise SystemExit(f"{exercise_id}: no verdict within {timeout:.0f} s; the screen:\n"
                         + "\n".join(self.screen.display))


def save(path: Path, text: str, how: str) -> None:
    if how == "rename":
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    else:
        path.write_text(text, encoding="utf-8")


def p95(samples: list[float]) -> float:
    """The nearest-rank 95th percentile: with few runs, the slowest or nearly so."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def measure(exercise: Exercise, runs: int, how: str) -> list[float]:
    """Seconds from each timed save to its verdict on screen."""
    files = (("✓", exercise.solution), ("✗", mutant_source(exercise, 0)))
    with tempfile.TemporaryDirectory() as home:
        workspace = Path(home) / "workspace"
        env = {k: v for k, v in os.environ.items()
               if k not in ("NO_COLOR", "COLUMNS", "LINES", "GRADTUTOR_DEBUG", "GRADTUTOR_WARM",
                            "GRADTUTOR_WATCH")}
        env.update(GRADTUTOR_HOME=home, TERM="xterm-256color", GRADTUTOR_LANG="en")
        child = pexpect.spawn(sys.executable, ["-m", "gradtutor", "watch", exercise.id,
                                               "--workspace", str(workspace)],
                              env=env, dimensions=(ROWS, COLUMNS), timeout=WAIT)
        terminal = Terminal(child)
        path = workspace / f"{exercise.id}.py"
        try:
            terminal.wait_until(READY, WAIT)  # the starter is written and watched by then
            seed = None
            for n, (mark, text) in enumerate(files):  # untimed: the worker warms up
                save(path, text, how)
                _, seed = terminal.wait_for(exercise.id, mark, seed, FIRST_WAIT if n == 0 else WAIT)
                time.sleep(PAUSE)
            took = []
            for _ in range(runs):
                for mark, text in files:
                    began = time.perf_counter()
                    save(path, text, how)
                    arrived, seed = terminal.wait_for(exercise.id, mark, seed, WAIT)
                    took.append(arrived - began)
                    time.sleep(PAUSE)
            child.send("q")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6,
                        help="timed saves of the reference, and of the mistake, per exercise (6)")
    parser.add_argument("--exercise", action="append", metavar="ID",
                        help="only this exercise (repeatable); default: every one")
    parser.add_argument("--save", choices=("write", "rename"), default="write",
                        help="write the file in place (default), or a temporary file renamed over")
    options = parser.parse_args()
    course = load_course(rules=EXERCISE_RULES)
    exercises = list(course.exercises().values())
    if options.exercise:
        exercises = [course.find_exercise(wanted) for wanted in options.exercise]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores; {platform.system()} {platform.release()}; Python "
          f"{platform.python_version()}; load average {load:.2f}")
    print(f"{options.runs} saves of the reference and {options.runs} of a mistake per exercise, "
          f"saved by {options.save}, {PAUSE} s apart, warm\n")
    width = max(len(e.id) for e in exercises) + 2
    print(f"{'exercise':<{width}} {'p50':>7} {'p95':>7} {'max':>7}")
    everything: list[float] = []
    misses = []
    for exercise in exercises:
        took = [s * 1000 for s in measure(exercise, options.runs, options.save)]
        everything += took
        median, slow = statistics.median(took), p95(took)
        if median > TARGET_P50_MS or slow > TARGET_P95_MS:
            misses.append(exercise.id)
        print(f"{exercise.id:<{width}} {median:>5.0f}ms {slow:>5.0f}ms {max(took):>5.0f}ms",
              flush=True)
    print(f"\nall {len(everything)} saves: p50 {statistics.median(everything):.0f} ms, "
          f"p95 {p95(everything):.0f} ms")
    print(f"target p50 <= {TARGET_P50_MS:.0f} ms and p95 <= {TARGET_P95_MS:.0f} ms per exercise: "
          + ("met" if not misses else f"NOT met by {', '.join(misses)}"))


if __name__ == "__main__":
    main()
