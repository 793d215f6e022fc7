"""Forged verdicts: learner files that try to pass without doing the exercise, run through
every way the tutor checks a file (a cold worker, a child of the warm fork server, a
pre-started spawned worker, and `gradtutor check --all --json`, run once on all the forged
files and once on all that must pass). None may pass; a file with a correct function (the
controls) must. Then the property, on fresh random seeds: a file of
the suite passes only if its function is correct.

The checks run in one subprocess (`forgery_driver.py`), as an ordinary user would run the
tutor: when these tests run as root, the driver runs without any capability (`setpriv`), since
CAP_SYS_PTRACE lets any process read any other's memory, the tutor's included, and no design
of the tutor's could stop that.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from isolation_support import EXPECTED, decided, worker_run

from gradtutor.checking.checkers import request_checker, worker_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(__file__).resolve().parents[1]

# Each file of the attack suite, and whether its function is correct.
SUITE: dict[str, bool] = {
    "forge_reads_reference": False,  # no function: reads the reference from memory, forges
    "forge_calls_hooks": False,  # no backward: calls the trace's hooks by hand
    "forge_hooks_in_other_backward": False,  # ... from inside an unrelated backward
    "forge_appends_events": False,  # no backward: appends an event to the trace
    "forge_notes_events": False,  # ... through the method checkers add their own events with
    "subclass_lies": False,  # zeros whose __torch_function__ answers tolist with the truth
    "subclass_dispatch_lies": False,  # zeros whose __torch_dispatch__ answers every operator
    "writes_fake_results": False,
    "tamper_torch": False,
    "eq_always_true": False,
    "wrong_prints_passed": False,
    "correct_prints_passed": True,  # controls: the property is not vacuous
    "thread_left_running": True,
}
# What docs/isolation.md states still passes: a file that computes every answer itself and
# forges a whole observation. Checked, so that the statement stays true.
GAPS = ("gap_forges_computed_answers",)
PATHS = ("cold", "fork_server", "pre_started", "check_all")



def as_ordinary_user() -> list[str] | None:
    """The command prefix that drops every capability (root only); None if none is needed;
    skip if it is needed and cannot be had."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot run as an ordinary user")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the memory attack reads /proc; the fork server is Linux's")
    prefix = as_ordinary_user()
    out = tmp_path_factory.mktemp("forgery") / "results.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    # `check --all` runs twice: on the forged files (none may pass, so it exits 1), and on
    # the files that pass (the controls and the stated gap, so it exits 0).
    forged = [name for name, correct in SUITE.items() if not correct]
    passing = [name for name, correct in SUITE.items() if correct] + list(GAPS)
    subprocess.run([*(prefix or []), sys.executable, str(ROOT / "tests" / "forgery_driver.py"),
                    str(out), *(str(HOSTILE / f"{name}.py") for name in forged), "--",
                    *(str(HOSTILE / f"{name}.py") for name in passing)],
                   env=env, check=True, timeout=1800)
    loaded: dict[str, dict[str, Any]] = json.loads(out.read_text())
    return loaded


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, correct in SUITE.items() if not correct])
@pytest.mark.parametrize("path", PATHS)
def test_a_forged_verdict_does_not_pass(results: dict[str, dict[str, Any]], name: str,
                                        path: str) -> None:
    got = results[name][path]
    assert got["status"] != "pass", got["checks"]
    if path == "check_all":
        assert got["exit"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, correct in SUITE.items() if correct])
@pytest.mark.parametrize("path", PATHS)
def test_a_correct_function_passes_every_way(results: dict[str, dict[str, Any]], name: str,
                                             path: str) -> None:
    got = results[name][path]
    assert got["status"] == "pass", got["checks"]
    if path == "check_all":
        assert got["exit"] == 0


@pytest.mark.slow
def test_every_way_gives_the_same_status(results: dict[str, dict[str, Any]]) -> None:
    for name, got in results.items():
        assert len({got[path]["status"] for path in PATHS}) == 1, (name, got)


@pytest.mark.slow
def test_no_file_passes_unless_its_function_is_correct(
        results: dict[str, dict[str, Any]]) -> None:
    """The property, on fresh random seeds (new cases each run) through the fork server."""
    for name, correct in SUITE.items():
        statuses = results[name]["seeds"]
        assert len(statuses) >= 5
        for seed, status in statuses.items():
            assert (status == "pass") == correct, (name, seed, status)


@pytest.mark.slow
def test_the_attacks_are_named_in_their_verdicts(results: dict[str, dict[str, Any]]) -> None:
    def said(name: str) -> str:
        return "\n".join(c[2] for c in results[name]["cold"]["checks"])

    assert "does not define a function named `read_grad`" in said("forge_reads_reference")
    for name in ("forge_calls_hooks", "forge_hooks_in_other_backward"):
        assert "called the checker's gradient hooks itself" in said(name)
    assert "no backward pass put it there" in said("forge_appends_events")
    assert "the trace records 'accumulate' events itself" in said("forge_notes_events")
    assert "You returned a tensor of zeros" in said("subclass_lies")
    assert "an object of type Liar" in said("subclass_dispatch_lies")


@pytest.mark.slow
def test_the_stated_gap_is_still_open(results: dict[str, dict[str, Any]]) -> None:
    """docs/isolation.md: a file that computes every answer and forges the whole observation
    passes. If this fails, the gap was closed: update the document."""
    for name in GAPS:
        assert {results[name][path]["status"] for path in PATHS} == {"pass"}


# ---- the reference process, and what the tutor checks itself ------------------------------

@pytest.mark.slow
def test_the_reference_process_without_fork_writes_the_reference_and_nothing_else() -> None:
    """The path Windows takes (no fork): a fresh interpreter, stdout the result pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    spec = json.dumps(request_checker(load_course(rules=EXERCISE_RULES).find_exercise("read-grad")))
    done = subprocess.run([sys.executable, "-m", "gradtutor.runtime.worker", "--reference",
                           spec, "7"], capture_output=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0
    (line,) = done.stdout.decode("ascii").splitlines()
    message = json.loads(line)
    assert message["type"] == "expected" and message["cases"] == worker_checker(
        request_checker(load_course(rules=EXERCISE_RULES).find_exercise("read-grad"))).cases(7)
    for case, reference in zip(message["cases"], message["expected"], strict=True):
        if case["loss"] == "squares":
            assert reference["grad"] == [2 * x for x in case["w"]]


def observed_with(**seen: Any) -> dict[str, Any]:
    return {"type": "observed", "observed": [{"returned": [2.0], **seen}, {"returned": [4.0]}]}


def test_hooks_called_outside_a_backward_fail_the_check() -> None:
    (check,) = decided(worker_run(EXPECTED, observed_with(forged=2)))
    assert (check.name, check.status) == ("trace", "fail")
    assert "called the checker's gradient hooks itself, outside a backward pass (2 times)" in (
        check.message)


@pytest.mark.parametrize("seen", [
    {"events": [{"event": "accumulate", "param": "w", "grad": [1.0, 2.0]}]},  # w is [1.0]
    {"events": [{"event": "accumulate", "param": "w", "grad": [[1.0]]}]},
    {"grad_after": [1.0, 1.0]},
])
def test_a_gradient_of_the_wrong_shape_is_not_believed(seen: dict[str, Any]) -> None:
    (check,) = decided(worker_run(EXPECTED, observed_with(**seen)))
    assert (check.name, check.status) == ("results", "error")
    assert "a gradient whose shape is not w's" in check.message


@pytest.mark.parametrize("events", ["accumulate", ["accumulate"], [{"kind": "accumulate"}]])
def test_events_that_are_not_events_are_not_believed(events: Any) -> None:
    (check,) = decided(worker_run(EXPECTED, observed_with(events=events)))
    assert (check.name, check.status) == ("results", "error")
    assert "an event that is not one" in check.message


def test_consistent_observations_are_judged() -> None:
    seen = {"events": [{"event": "accumulate", "param": "w", "grad": [2.0]}],
            "grad_after": [2.0]}
    (check,) = decided(worker_run(EXPECTED, observed_with(**seen)))
    assert (check.name, check.status) == ("values", "pass")
