"""How long gradtutor takes to start, against the bare cost of importing its UI libraries.

    python benchmarks/startup.py [--runs 15] [--lessons DIR] [--lesson grad] [--against PY]

Each case runs as a fresh `python` process, the cases taken in turn (round robin) after one
warm-up round, so a slow moment of the machine falls on all of them alike. Times are wall
times from starting the process to its end, or, for the walkthrough, to its first slide on
a real pseudo-terminal (POSIX only; needs pexpect).

Each run has a data folder of its own (GRADTUTOR_HOME), holding the lesson cache that a
learner's earlier runs leave there (the parsed YAML of each lesson, the colours of the code
on the slides shown: `gradtutor.lessons.cache`), as every start after the first finds it;
case (h) is the first start after an install or a lesson's change, with no cache.

`--against PY` adds the show and start cases of another install (its Python, say the venv
of an older version), taken in the same rounds, for a before/after that no change of the
machine's load between two runs can skew.

The target: the first slide within 1.3x the bare UI import. It also checks, with
`python -X importtime`, that --help, list and show never import torch.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TARGET = 1.3
UI_IMPORTS = ("import rich, typer, yaml, rich.console, rich.markdown, rich.syntax, rich.panel, "
              "rich.table")


def with_cache(home: str, cache: Path | None) -> None:
    """Give the data folder `home` the lesson cache in `cache` (none if None)."""
    if cache is not None:
        shutil.copytree(cache, Path(home) / "cache")


def child_env(home: str, lessons: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "COLUMNS", "LINES", "PYTHONIMPORTTIME", "GRADTUTOR_DEBUG")}
    # English, whatever the caller's language: the walkthrough's timing waits for its words.
    env.update(GRADTUTOR_HOME=home, TERM="xterm-256color", GRADTUTOR_LANG="en")
    if lessons:
        env["GRADTUTOR_LESSONS"] = lessons
    return env


def timed_process(argv: list[str], lessons: str | None,
                  cache: Path | None = None) -> Callable[[], float]:
    def run() -> float:
        with tempfile.TemporaryDirectory() as home:
            with_cache(home, cache)
            env = child_env(home, lessons)
            began = time.perf_counter()
            result = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            took = time.perf_counter() - began
        if result.returncode != 0:
            raise SystemExit(f"`{' '.join(argv)}` failed ({result.returncode}):\n"
                             f"{result.stderr.decode(errors='replace')}")
        return took
    return run


def timed_first_slide(lesson: str, lessons: str | None, *, warm: bool,
                      next_step: list[float], cache: Path | None,
                      home: str | None = None, python: str = sys.executable
                      ) -> Callable[[], float]:
    """Time to the first slide of `gradtutor start` on a real pty; with `warm`, the warm
    worker starts (importing torch) right after that slide, as it does for a learner, and
    the time from pressing Enter to the second slide, while it starts, goes in `next_step`.
    Each run in a new data folder, or in `home`."""
    import pexpect

    def run() -> float:
        with tempfile.TemporaryDirectory() as fresh:
            with_cache(fresh, cache)
            env = child_env(home or fresh, lessons)
            env["GRADTUTOR_WARM"] = "1" if warm else "0"
            began = time.perf_counter()
            child = pexpect.spawn(python, ["-m", "gradtutor", "start", lesson],
                                  env=env, dimensions=(40, 100), encoding="utf-8", timeout=30)
            try:
                child.expect("step 1 of")
                took = time.perf_counter() - began
                pressed = time.perf_counter()
                child.send("\r")
                child.expect("step 2 of")
                next_step.append(time.perf_counter() - pressed)
                child.send("q")
                child.expect(pexpect.EOF)
            except (pexpect.TIMEOUT, pexpect.EOF):
                raise SystemExit(f"no first slide from `gradtutor start {lesson}`:\n"
                                 f"{child.before}") from None
            finally:
                child.close(force=True)
        return took
    return run


def torch_imported(args: list[str], lessons: str | None) -> bool:
    """Whether `python -m gradtutor *args` imports torch, from its -X importtime log."""
    with tempfile.TemporaryDirectory() as home:
        result = subprocess.run([sys.executable, "-X", "importtime", "-m", "gradtutor", *args],
                                env=child_env(home, lessons), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"`gradtutor {' '.join(args)}` failed:\n{result.stderr[-2000:]}")
    modules = [line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:") and "|" in line]
    if "gradtutor.cli" not in modules:
        raise SystemExit("could not read the -X importtime log")
    return any(m == "torch" or m.startswith("torch.") for m in modules)


def p95(samples: list[float]) -> float:
    """The nearest-rank 95th percentile: with few runs, the slowest or nearly so."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def swapped_pairs(order: list[str]) -> list[str]:
    """`order` with each case and its [against] twin (x, X) swapped."""
    swapped = list(order)
    for i in range(len(swapped) - 1):
        if swapped[i + 1] == swapped[i].upper() != swapped[i]:
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    return swapped


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each case (15)")
    parser.add_argument("--lessons", metavar="DIR",
                        help="lessons folder (default: GRADTUTOR_LESSONS, else the built-in one)")
    parser.add_argument("--lesson", default="grad", help="the lesson to show and start (grad)")
    parser.add_argument("--against", metavar="PY",
                        help="also time show and start with this Python's gradtutor")
    options = parser.parse_args()
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    lessons = options.lessons or os.environ.get("GRADTUTOR_LESSONS")
    py = [sys.executable]
    gt = [*py, "-m", "gradtutor"]
    seeded = tempfile.mkdtemp(prefix="gradtutor-cache-")  # the cache earlier runs leave
    subprocess.run([*gt, "list"], env=child_env(seeded, lessons), stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=True)
    cache = Path(seeded) / "cache"
    if sys.platform != "win32":  # the first slide drawn once, its code coloured
        timed_first_slide(options.lesson, lessons, warm=False, next_step=[], cache=None,
                          home=seeded)()

    cases: dict[str, Callable[[], float]] = {
        "a": timed_process([*py, "-c", UI_IMPORTS], lessons),
        "b": timed_process([*gt, "--help"], lessons, cache),
        "c": timed_process([*gt, "list"], lessons, cache),
        "d": timed_process([*gt, "show", options.lesson, "--step", "1", "--plain"], lessons,
                           cache),
        "f": timed_process([*py, "-c", "import torch"], lessons),
    }
    labels = {
        "a": "bare UI import (rich, typer, yaml + slide modules)",
        "b": "gradtutor --help",
        "c": "gradtutor list",
        "d": f"gradtutor show {options.lesson} --step 1 --plain",
        "e": f"gradtutor start {options.lesson}: first slide (pty), warm worker starting",
        "g": f"gradtutor start {options.lesson}: first slide, GRADTUTOR_WARM=0",
        "h": f"gradtutor start {options.lesson}: first slide, no lesson cache yet",
        "f": "import torch (reference)",
    }
    unused: list[float] = []
    next_warm: list[float] = []
    next_cold: list[float] = []
    try:
        if sys.platform == "win32":
            raise ImportError("no pseudo-terminal on Windows")
        cases["e"] = timed_first_slide(options.lesson, lessons, warm=True, next_step=next_warm,
                                       cache=cache)
        cases["g"] = timed_first_slide(options.lesson, lessons, warm=False, next_step=next_cold,
                                       cache=cache)
        cases["h"] = timed_first_slide(options.lesson, lessons, warm=True, next_step=unused,
                                       cache=None)
    except ImportError as exc:
        print(f"(e) skipped: {exc}")
    if options.against:
        theirs = [options.against, "-m", "gradtutor"]
        cases["D"] = timed_process([*theirs, "show", options.lesson, "--step", "1", "--plain"],
                                   lessons, cache)
        labels["D"] = f"[against] {labels['d']}"
        if "e" in cases:
            cases["E"] = timed_first_slide(options.lesson, lessons, warm=True, next_step=[],
                                           cache=cache, python=options.against)
            cases["H"] = timed_first_slide(options.lesson, lessons, warm=True, next_step=[],
                                           cache=None, python=options.against)
            labels["E"], labels["H"] = f"[against] {labels['e']}", f"[against] {labels['h']}"
    order = sorted(cases, key=str.lower)

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {platform.system()} "
          f"{platform.release()}; Python {platform.python_version()} ({sys.executable})")
    print(f"runs: {options.runs} of each case, after one warm-up round; lesson "
          f"'{options.lesson}' from {lessons or 'the built-in course'}")
    print()
    for key in order:  # warm-up: page cache, .pyc files
        cases[key]()
    next_warm.clear()
    next_cold.clear()
    samples: dict[str, list[float]] = {key: [] for key in order}
    for run in range(options.runs):
        # a case and its [against] twin swap places every other round: neither always
        # follows the other (whose warm worker may still be ending)
        for key in order if run % 2 == 0 else swapped_pairs(order):
            samples[key].append(cases[key]())

    width = max(len(labels[key]) for key in order) + 4
    print(f"{'case':<{width}} {'median':>9} {'p95':>9} {'min':>9}  {'x (a)':>6}")
    base = statistics.median(samples["a"])
    for key in order:
        median = statistics.median(samples[key])
        print(f"{f'({key}) ' + labels[key]:<{width}} {median * 1000:>7.0f}ms "
              f"{p95(samples[key]) * 1000:>7.0f}ms {min(samples[key]) * 1000:>7.0f}ms  "
              f"{median / base:>6.2f}")
    print()
    for key, what in (("e", "first slide"), ("h", "first slide, no cache"),
                      ("d", "show one step"), ("E", "[against] first slide"),
                      ("H", "[against] first slide, no cache"), ("D", "[against] show one step")):
        if key in samples:
            ratio = statistics.median(samples[key]) / base
            verdict = "met" if ratio <= TARGET else "NOT met"
            print(f"{what} / bare UI import = {ratio:.2f}x  (target <= {TARGET}x: {verdict})")
    if next_warm and next_cold:
        warm, cold = statistics.median(next_warm), statistics.median(next_cold)
        print(f"Enter to step 2: median {warm * 1000:.0f} ms while the warm worker starts, "
              f"{cold * 1000:.0f} ms without it")
        first = statistics.median(samples["e"]) / statistics.median(samples["g"])
        print(f"first slide with / without the warm worker starting = {first:.2f}x")
    print()
    for args in (["--help"], ["list"], ["show", options.lesson, "--step", "1", "--plain"]):
        imported = torch_imported(args, lessons)
        print(f"torch imported by `gradtutor {' '.join(args)}`: {'YES' if imported else 'no'}")
    shutil.rmtree(seeded, ignore_errors=True)


if __name__ == "__main__":
    main()
