"""What a check costs, cold and warm: the figures behind the warm worker (issue #4).

    python benchmarks/checks.py [WARM_CHECKS] [COLD_CHECKS]

Times `python -c "import torch"`; a cold `gradtutor check read-grad SOLUTION` (the full CLI in
a subprocess, as a learner runs it), p50 over COLD_CHECKS (default 5); and WarmWorker.check of
the same solution, after start(), p50 and p95 over WARM_CHECKS (default 40; the first check,
which waits for the worker's start, is reported apart). Then the peak memory (max RSS) of
this process (the tutor's side) and of the warm worker (the fork server, or the pre-started
worker). Targets: warm p50 <= 50 ms, and at least 20x faster than cold.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from gradtutor.checking.warm import FORK_SERVER, WarmWorker
from gradtutor.lessons.course import load_course

TARGET_MS = 50.0
TARGET_RATIO = 20.0


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def seconds_of(argv: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout.decode()}"
                 f"{done.stderr.decode()}")
    return took


def peak_kib(pid: int | str = "self") -> int | None:
    """VmHWM (peak resident memory) of a process, from Linux's /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def mib(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.0f} MiB"


def main() -> None:
    warm_checks = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    cold_checks = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python "
          f"{platform.python_version()}, torch {version('torch')}"
          + (f", load average {load[0]:.2f}" if load else ""))
    print(f"warm worker: {'fork server' if FORK_SERVER else 'pre-started spawned worker'}\n")

    exercise = load_course().find_exercise("read-grad")
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-bench-"))
    solution = folder / "read_grad.py"
    solution.write_text(exercise.solution, encoding="utf-8")
    env = {**os.environ, "GRADTUTOR_HOME": str(folder / "home"), "GRADTUTOR_WARM": "0"}

    cold = [seconds_of([sys.executable, "-m", "gradtutor", "check", "read-grad", str(solution),
                        "--plain"], env) for _ in range(cold_checks)]
    # the largest of the CLI processes and their workers so far (KiB on Linux)
    cold_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    imports = [seconds_of([sys.executable, "-c", "import torch"]) for _ in range(3)]

    with WarmWorker() as worker:  # starts it
        started = time.perf_counter()
        first = worker.check(exercise, solution, seed=0)
        first_s = time.perf_counter() - started
        warm: list[float] = []
        for seed in range(1, warm_checks + 1):
            started = time.perf_counter()
            verdict = worker.check(exercise, solution, seed=seed)
            warm.append(time.perf_counter() - started)
            if not verdict.passed:
                sys.exit(f"the solution failed a warm check: {verdict.checks}")
        server_peak = peak_kib(worker.pid) if worker.pid is not None else None
    if not first.passed:
        sys.exit(f"the solution failed the first warm check: {first.checks}")

    cold_p50 = statistics.median(cold) * 1000
    warm_p50, warm_p95 = percentile(warm, 50) * 1000, percentile(warm, 95) * 1000
    ratio = cold_p50 / warm_p50
    rows = [
        ("python -c 'import torch' (p50 of 3)", f"{statistics.median(imports) * 1000:.0f} ms"),
        (f"cold: gradtutor check read-grad, CLI (p50 of {cold_checks})", f"{cold_p50:.0f} ms"),
        ("warm: first check, waits for start()", f"{first_s * 1000:.0f} ms"),
        (f"warm: WarmWorker.check p50 (of {warm_checks})", f"{warm_p50:.1f} ms"),
        (f"warm: WarmWorker.check p95 (of {warm_checks})", f"{warm_p95:.1f} ms"),
        ("cold p50 / warm p50", f"{ratio:.0f}x"),
        ("peak RSS: tutor process (this one)", mib(peak_kib())),
        ("peak RSS: warm worker (fork server)" if FORK_SERVER else
         "peak RSS: warm worker (pre-started)", mib(server_peak)),
        ("peak RSS: cold check (CLI or its worker)", mib(cold_children)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>10}")
    ok = warm_p50 <= TARGET_MS and ratio >= TARGET_RATIO
    print(f"\ntargets: warm p50 <= {TARGET_MS:.0f} ms and >= {TARGET_RATIO:.0f}x faster than "
          f"cold: {'met' if ok else 'NOT met'}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
