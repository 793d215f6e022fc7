"""Figures for the check engine's isolation: what one check costs, and how long the tutor
takes to stop learner code that will not stop by itself.

    python benchmarks/isolation.py [RUNS]

Each line is the median over RUNS (default 5) checks of the `read-grad` exercise, one at a
time. "start-up" is the worker's time before learner code runs (mostly `import torch`);
"after the limit" is what a kill adds to the time limit: noticing it, SIGKILL to the process
group, the sweep for escaped processes, and removing the working folder.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from gradtutor.lessons.model import Exercise
from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.run import run_check

HOSTILE = Path(__file__).resolve().parents[1] / "tests" / "hostile"
LIMIT = 2.0


def exercise() -> Exercise:
    return Exercise(kind="exercise", id="read-grad", title="t", prompt="p", checker="read-grad",
                    function="read_grad", starter="s", solution="s", hints=("a", "b", "c"),
                    mutants=(), why="w", timeout=LIMIT)


def measure(path: Path, runs: int) -> tuple[float, float, str]:
    """Median wall time, median start-up, and the status, in seconds."""
    walls, startups, statuses = [], [], set()
    for seed in range(runs):
        started = time.monotonic()
        verdict = run_check(exercise(), path, seed=seed,
                            engine=ColdEngine(environ=dict(os.environ)))
        walls.append(time.monotonic() - started)
        startups.append((verdict.extra.get("startup_ms") or 0) / 1000)
        statuses.add(verdict.status)
    return statistics.median(walls), statistics.median(startups), "/".join(sorted(statuses))


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"{'learner file':28} {'status':8} {'wall':>7} {'start-up':>9} {'after start-up':>15}")
    for name in ("correct_prints_passed", "infinite_loop", "ignores_sigterm", "thread_blocked",
                 "memory_flood", "output_flood", "segfault", "fork_children",
                 "setsid_grandchild", "setsid_exec_sleep"):
        wall, startup, status = measure(HOSTILE / f"{name}.py", runs)
        after = wall - startup
        note = f" ({after - LIMIT:+.2f} s after the limit)" if status == "timeout" else ""
        print(f"{name:28} {status:8} {wall:6.2f}s {startup:8.2f}s {after:14.2f}s{note}")


if __name__ == "__main__":
    import os
    import tempfile

    os.environ.setdefault("GRADTUTOR_TEST_PIDDIR", tempfile.mkdtemp())
    main()
