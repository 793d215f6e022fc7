"""Run learner files through every way the tutor checks one, and print the verdicts as JSON.

    python tests/forgery_driver.py RESULTS.json FILE.py... [-- FILE.py...]...
    # each file answers read-grad; `--` starts another group

For each file, the ways of checking it that tests/hostile_cases.py lists for it (`paths`): a
cold check (`run_check`), a check in a child of the warm fork server, one in a pre-started
spawned worker (the macOS and Windows path), `gradtutor check --all --json`; then checks on
fresh random seeds through the fork server (the property: a file passes only if its function
is correct). One process for all of it, so that
tests/test_forgery.py can run it as an ordinary user would (without CAP_SYS_PTRACE) even when
the tests run as root.

`check --all` runs once per group of files, as a class's autograder would on a workspace with
many exercises: every file of the group is the workspace file of its own copy of the course's
read-grad (the lesson's declaration word for word, under the id `read-grad-` + the file's
name), all checked by one tutor on one warm worker. Its exit code is the group's.
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

from hostile_cases import COLD, FORK, HOSTILE_FILES, PRE_STARTED

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.fork import FORK_SERVER
from gradtutor.runtime.run import run_check
from gradtutor.runtime.warm import WarmWorker

CORRECT = "def read_grad(w, loss_fn):\n    loss_fn(w).backward()\n    return w.grad\n"
ROOT = Path(__file__).resolve().parents[1]
SEEDS = 6  # fresh seeds per file for the property


def exercise() -> Exercise:
    """The course's read-grad, judged as the lesson declares it, with this time limit."""
    step = load_course(rules=EXERCISE_RULES).find_exercise("read-grad")
    assert isinstance(step, Exercise)
    return dataclasses.replace(step, timeout=5.0)


def summary(verdict: Verdict) -> dict[str, object]:
    return {"status": verdict.status, "output": verdict.output,
            "checks": [[c.name, c.status, c.message] for c in verdict.checks]}


def exercise_id(path: Path) -> str:
    """The id of `path`'s copy of read-grad in `check_all`'s course."""
    return "read-grad-" + path.stem.replace("_", "-")


def read_grad_lesson(paths: list[Path]) -> str:
    """A lesson whose exercises are the course's read-grad, declared as the shipped lesson
    declares it, once for each file, under the file's `exercise_id`."""
    import yaml

    from gradtutor.lessons.course import default_lessons_dir

    lesson = yaml.safe_load((default_lessons_dir() / "grad.yaml").read_text(encoding="utf-8"))
    (step,) = [s for s in lesson["steps"] if s.get("id") == "read-grad"]
    steps = [{**step, "id": exercise_id(path)} for path in paths]
    return yaml.safe_dump({"id": "forgery", "title": "Forged verdicts", "order": 1,
                           "summary": "Each exercise is read-grad.", "steps": steps},
                          sort_keys=False, allow_unicode=True)


def check_all(paths: list[Path]) -> dict[str, dict[str, object]]:
    """`gradtutor check --all --json` on a workspace holding each file as the workspace file
    of its own copy of read-grad: file name -> its verdict and the run's exit code."""
    workspace = Path(tempfile.mkdtemp(prefix="forgery-ws-"))
    try:
        (workspace / "lessons").mkdir()
        (workspace / "lessons" / "forgery.yaml").write_text(read_grad_lesson(paths),
                                                            encoding="utf-8")
        for path in paths:
            shutil.copy(path, workspace / f"{exercise_id(path)}.py")
        env = {**os.environ, "GRADTUTOR_HOME": str(workspace / "home"), "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "gradtutor", "check", "--all", "--json", "--workspace",
             str(workspace), "--lessons", str(workspace / "lessons"), "--seed", "7"],
            capture_output=True, text=True, env=env, timeout=600, check=False)
        report = json.loads(done.stdout)
        by_id = {e["exercise"]: e for e in report["exercises"]}
        assert len(by_id) == report["total"] == len(paths), report
        return {path.stem: {
            "status": by_id[exercise_id(path)]["status"], "exit": done.returncode,
            "output": by_id[exercise_id(path)]["output"],
            "checks": [[c["name"], c["status"], c["message"]]
                       for c in by_id[exercise_id(path)]["checks"]]} for path in paths}
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def main() -> None:
    out = Path(sys.argv[1])
    groups: list[list[Path]] = [[]]
    for arg in sys.argv[2:]:
        if arg == "--":
            groups.append([])
        else:
            groups[-1].append(Path(arg))
    files = [path for group in groups for path in group]
    rng = random.Random()
    results: dict[str, dict[str, object]] = {name.stem: {} for name in files}
    # one for the three threads: each one's sweep spares the others
    engine = ColdEngine(environ=dict(os.environ))

    def cold(path: Path) -> None:
        results[path.stem]["cold"] = summary(run_check(exercise(), path, seed=7, engine=engine))

    def by_cli(group: list[Path]) -> None:
        for name, verdict in check_all(group).items():
            results[name]["check_all"] = verdict

    # A worker mostly waits for its torch import: three at once. Not both kinds at once: the
    # sweep after a check kills every new process below this one (a tutor's), a CLI too.
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(cold, [path for path in files if COLD in HOSTILE_FILES[path.stem].paths]))
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(by_cli, [group for group in groups if group]))
    for fork, label in ((True, FORK), (False, PRE_STARTED)):
        if fork and not FORK_SERVER:
            continue
        with WarmWorker(fork=fork, environ=dict(os.environ)) as warm:
            # the fork server meets every file (on fresh seeds too); a pre-started worker,
            # one torch import per check, only the files whose ending is the engine's
            for path in (files if fork else
                         [p for p in files if PRE_STARTED in HOSTILE_FILES[p.stem].paths]):
                results[path.stem][label] = summary(warm.check(exercise(), path, seed=7))
                if fork:
                    seeds = [rng.randrange(2**31) for _ in range(SEEDS)]
                    results[path.stem]["seeds"] = {
                        str(seed): warm.check(exercise(), path, seed=seed).status
                        for seed in seeds}
    out.write_text(json.dumps(results))


if __name__ == "__main__":
    main()
