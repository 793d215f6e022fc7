"""Forged verdicts: learner files that try to pass without doing the exercise (the `forged`
files of tests/hostile_cases.py), each run through the ways of checking a file it lists for
it: a cold worker, a child of the warm fork server, a pre-started spawned worker, and
`gradtutor check --all --json` (run once on all the forged files and once on all that must
pass). The files whose ending is the engine's (where the references live, how output is kept
apart from results) meet all four; those the shared judge decides meet the fork server and
`check --all`. None may pass, and each gets its status and words; a file with a correct
function (the controls) must pass. Then the property, on fresh random seeds through the fork
server: a file of the suite passes only if its function is correct.

The checks run in one subprocess (`forgery_driver.py`), as the tutor or a teacher's grader
runs: as root with root's capabilities when these tests run as root (CI, containers). The
worker drops every capability before learner code runs (runtime/privilege.py), so the
CAP_SYS_PTRACE that would let learner code read the tutor's memory is never the learner's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_cases import CHECK_ALL, GAPS, HOSTILE_FILES, PATHS
from isolation_support import EXPECTED, decided, worker_run

from gradtutor.checking import protocol
from gradtutor.checking.checkers import request_checker, worker_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.runtime.sender import ForkedChildEnds, ResultSender

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(__file__).resolve().parents[1]

# The attack suite: the forged files of tests/hostile_cases.py, each met on its `paths`.
SUITE = {name: case for name, case in HOSTILE_FILES.items() if case.forged}
MET = [(name, path) for name, case in SUITE.items() for path in PATHS if path in case.paths]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the memory attack reads /proc; the fork server is Linux's")
    out = tmp_path_factory.mktemp("forgery") / "results.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    # `check --all` runs twice: on the forged files (none may pass, so it exits 1), and on
    # the files that pass (the controls and the stated gap, so it exits 0).
    forged = [name for name, case in SUITE.items() if not case.correct]
    passing = [name for name, case in SUITE.items() if case.correct]
    subprocess.run([sys.executable, str(ROOT / "tests" / "forgery_driver.py"),
                    str(out), *(str(HOSTILE / f"{name}.py") for name in forged), "--",
                    *(str(HOSTILE / f"{name}.py") for name in passing)],
                   env=env, check=True, timeout=1800)
    loaded: dict[str, dict[str, Any]] = json.loads(out.read_text())
    return loaded


def said(got: dict[str, Any]) -> str:
    return "\n".join(check[2] for check in got["checks"])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "path"), [(n, p) for n, p in MET if not SUITE[n].correct])
def test_a_forged_verdict_does_not_pass(results: dict[str, dict[str, Any]], name: str,
                                        path: str) -> None:
    """Each forged file gets its status on every way it meets, and its verdict names the
    attack."""
    got = results[name][path]
    assert got["status"] == SUITE[name].status != "pass", got["checks"]
    for words in SUITE[name].said(5.0):
        assert words in said(got), got["checks"]
    if path == CHECK_ALL:
        assert got["exit"] == 1


@pytest.mark.slow
@pytest.mark.parametrize(("name", "path"), [(n, p) for n, p in MET if SUITE[n].correct])
def test_a_correct_function_passes_every_way(results: dict[str, dict[str, Any]], name: str,
                                             path: str) -> None:
    got = results[name][path]
    assert got["status"] == "pass", got["checks"]
    if path == CHECK_ALL:
        assert got["exit"] == 0


@pytest.mark.slow
def test_every_way_gives_the_same_status(results: dict[str, dict[str, Any]]) -> None:
    for name, case in SUITE.items():
        assert len({results[name][path]["status"] for path in case.paths}) == 1, (
            name, results[name])


@pytest.mark.slow
def test_no_file_passes_unless_its_function_is_correct(
        results: dict[str, dict[str, Any]]) -> None:
    """The property, on fresh random seeds (new cases each run) through the fork server."""
    for name, case in SUITE.items():
        statuses = results[name]["seeds"]
        assert len(statuses) >= 5
        for seed, status in statuses.items():
            assert (status == "pass") == case.correct, (name, seed, status)


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_printed_claims_do_not_change_the_verdict(results: dict[str, dict[str, Any]],
                                                  path: str) -> None:
    assert results["correct_prints_passed"][path]["status"] == "pass"
    assert results["correct_prints_passed"][path]["output"] == "passed\n" * 4
    lying = results["wrong_prints_passed"][path]
    assert lying["status"] != "pass" and "PASSED ✓ all checks passed" in lying["output"]


@pytest.mark.slow
def test_the_stated_gap_is_still_open(results: dict[str, dict[str, Any]]) -> None:
    """docs/isolation.md: a file that computes every answer and forges the whole observation
    passes. If this fails, the gap was closed: update the document."""
    for name in GAPS:
        assert {results[name][path]["status"] for path in PATHS} == {"pass"}


# ---- the reference process, and what the tutor checks itself ------------------------------

@pytest.mark.slow
def test_the_reference_process_without_fork_writes_the_reference_and_nothing_else() -> None:
    """The path the tutor takes for a cold or pre-started check (and Windows for every one):
    a fresh interpreter, the checker on its stdin (never its command line), stdout the result
    pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    spec = json.dumps(request_checker(load_course(rules=EXERCISE_RULES).find_exercise("read-grad")))
    question = json.dumps({"checker": json.loads(spec), "seed": 7})
    done = subprocess.run([sys.executable, "-m", "gradtutor.runtime.worker", "--reference"],
                          input=question.encode(), capture_output=True, env=env, timeout=300,
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


# ---- children of learner code: the worker's side -------------------------------------------

def forked(body: Callable[[], object]) -> int:
    """Run `body` in a forked child of this process; the child's exit code. The child ends
    with 99 if `body` comes back (it must not: it has to end inside)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12: fork with threads
        pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def raise_value_error() -> None:
    raise ValueError("the child's own mistake")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize(("learner_code", "code"), [
    (lambda: None, 0), (raise_value_error, 1), (lambda: sys.exit(3), 3),
    (lambda: sys.exit(None), 0), (lambda: sys.exit("bye"), 1), (lambda: sys.exit(256 + 4), 4),
])
def test_a_child_of_learner_code_ends_where_its_call_ends_with_python_s_code(
        learner_code: Callable[[], object], code: int) -> None:
    ends = ForkedChildEnds()  # made in the worker, before learner code

    def call() -> None:
        with ends:
            learner_code()

    assert forked(call) == code
    with ends:  # the worker itself goes on
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_that_reaches_the_result_channel_ends_there_and_writes_nothing() -> None:
    read, write = os.pipe()
    try:
        send = ResultSender(write)
        assert forked(lambda: send(protocol.started())) == 0
        send(protocol.observed([]))
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as pipe:
            read = -1
            assert pipe.read().splitlines() == [protocol.line(protocol.observed([])).strip()]
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
