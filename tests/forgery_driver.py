"""Run learner files through every way the tutor checks one, and print the verdicts as JSON.

    python tests/forgery_driver.py RESULTS.json FILE.py...   # each file answers read-grad

For each file: a cold check (`run_check`), a check in a child of the warm fork server, one
in a pre-started spawned worker (the macOS and Windows path), and `gradtutor check --all
--json` with the file as the workspace's read-grad.py; then checks on fresh random seeds
through the fork server (the property: a file passes only if its function is correct). One
process for all of it, so that tests/test_forgery.py can run it as an ordinary user would
(without CAP_SYS_PTRACE) even when the tests run as root.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gradtutor.checking.runner import ColdEngine, run_check
from gradtutor.checking.verdict import Verdict
from gradtutor.checking.warm import FORK_SERVER, WarmWorker
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

CORRECT = "def read_grad(w, loss_fn):\n    loss_fn(w).backward()\n    return w.grad\n"
ROOT = Path(__file__).resolve().parents[1]
SEEDS = 6  # fresh seeds per file for the property


def exercise() -> Exercise:
    """The course's read-grad, judged as the lesson declares it, with this time limit."""
    step = load_course().find_exercise("read-grad")
    assert isinstance(step, Exercise)
    return dataclasses.replace(step, timeout=5.0)


def summary(verdict: Verdict) -> dict[str, object]:
    return {"status": verdict.status,
            "checks": [[c.name, c.status, c.message] for c in verdict.checks]}


def check_all(path: Path) -> dict[str, object]:
    """`gradtutor check --all --json` on a workspace holding only this file as read-grad.py."""
    workspace = Path(tempfile.mkdtemp(prefix="forgery-ws-"))
    try:
        shutil.copy(path, workspace / "read-grad.py")
        env = {**os.environ, "GRADTUTOR_HOME": str(workspace / "home"), "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "gradtutor", "check", "--all", "--json", "--workspace",
             str(workspace), "--seed", "7"], capture_output=True, text=True, env=env,
            timeout=600, check=False)
        report = json.loads(done.stdout)
        (entry,) = [e for e in report["exercises"] if e["exercise"] == "read-grad"]
        return {"status": entry["status"], "exit": done.returncode,
                "checks": [[c["name"], c["status"], c["message"]] for c in entry["checks"]]}
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def main() -> None:
    out, files = Path(sys.argv[1]), [Path(f) for f in sys.argv[2:]]
    rng = random.Random()
    results: dict[str, dict[str, object]] = {name.stem: {} for name in files}
    engine = ColdEngine()  # one for the three threads: each one's sweep spares the others

    def cold(path: Path) -> None:
        results[path.stem]["cold"] = summary(run_check(exercise(), path, seed=7, engine=engine))

    def by_cli(path: Path) -> None:
        results[path.stem]["check_all"] = check_all(path)

    # A worker mostly waits for its torch import: three at once. Not both kinds at once: the
    # sweep after a check kills every new process below this one (a tutor's), a CLI too.
    for run in (cold, by_cli):
        with ThreadPoolExecutor(max_workers=3) as pool:
            list(pool.map(run, files))
    for fork, label in ((True, "fork_server"), (False, "pre_started")):
        if fork and not FORK_SERVER:
            continue
        with WarmWorker(fork=fork) as warm:
            for path in files:
                results[path.stem][label] = summary(warm.check(exercise(), path, seed=7))
                if fork:
                    seeds = [rng.randrange(2**31) for _ in range(SEEDS)]
                    results[path.stem]["seeds"] = {
                        str(seed): warm.check(exercise(), path, seed=seed).status
                        for seed in seeds}
    out.write_text(json.dumps(results))


if __name__ == "__main__":
    main()
