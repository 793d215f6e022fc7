"""Run the test suite (or the pytest arguments given) with a CPU burner on every core, RUNS
times in a row, and say how each run ended: the suite must pass on a loaded machine too.

    python benchmarks/under_load.py                      # the whole suite, 5 runs
    python benchmarks/under_load.py --runs 2 tests/test_fullscreen.py -n 0

Each burner is a process spinning at full speed at normal priority, as a busy build would be.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def burn() -> None:
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                        help="busy processes (default: one per core)")
    options, pytest_args = parser.parse_known_args()
    burners = [multiprocessing.Process(target=burn, daemon=True)
               for _ in range(options.burners)]
    for burner in burners:
        burner.start()
    failed = 0
    try:
        for run in range(1, options.runs + 1):
            started = time.monotonic()
            code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                    *pytest_args])
            took = time.monotonic() - started
            failed += code != 0
            print(f"run {run} of {options.runs}: exit {code} in {took / 60:.1f} min "
                  f"with {options.burners} burners", flush=True)
    finally:
        for burner in burners:
            burner.terminate()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
