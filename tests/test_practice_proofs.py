"""`gradtutor validate` proves the practice steps that run code: a demo leaves every series
its chart names, and a Parsons step's correct order runs as its loop and leaves its series.

The decisions are pure (jobs_for, problem_text) and tested on made-up results; one slow test
runs the real batch worker over the fixture course and the shipped lesson."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from narrowing import step_as

from gradtutor.checking.check import FILE_BUDGET, MEMORY_BUDGET
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import Job, jobs_for, problem_text
from gradtutor.lessons.course import load_course
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Parsons
from gradtutor.lessons.parsons import assembled

if TYPE_CHECKING:
    from conftest import Cli

FIXTURES = Path(__file__).parent / "fixtures" / "course"


@pytest.fixture(scope="module")
def grad_jobs() -> dict[str, Job]:
    lesson = load_course(rules=EXERCISE_RULES).find("grad")
    return {job.what: job for job in jobs_for(lesson, Path("grad.yaml"))}


def test_demos_and_the_parsons_loop_are_proven(grad_jobs: dict[str, Job]) -> None:
    bug = grad_jobs["the code of demo 'hidden-bug-demo'"]
    assert (bug.expect, bug.series, bug.request["series"]) == (
        "series", ("with_zeroing", "without_zeroing"), ["with_zeroing", "without_zeroing"])
    momentum = grad_jobs["the code of demo 'momentum-demo'"]
    assert (momentum.expect, momentum.series, momentum.request["series"]) == ("runs", (), [])
    loop = grad_jobs["the loop of 'order-the-loop' in its correct order"]
    lesson = load_course(rules=EXERCISE_RULES).find("grad")
    step = step_as(lesson, "order-the-loop", Parsons)
    assert loop.request == {"kind": "snippet", "series": ["losses"], "show": None,
                            "code": assembled(step, step.solution_order), "filename": "<snippet>",
                            "memory_bytes": MEMORY_BUDGET, "file_bytes": FILE_BUDGET}
    assert loop.loc == ("steps", lesson.index_of("order-the-loop"), "run")


def test_a_parsons_step_without_run_has_nothing_to_prove() -> None:
    lesson = load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES)
    whats = [job.what for job in jobs_for(lesson, FIXTURES / "second.yaml")]
    assert not any("training-step" in what for what in whats)
    assert "the code of demo 'descent'" in whats


def test_a_run_that_leaves_its_series_proves_it(grad_jobs: dict[str, Job]) -> None:
    job = grad_jobs["the code of demo 'hidden-bug-demo'"]
    result = {"shown": None, "series": {"with_zeroing": [3.0, 1.0],
                                        "without_zeroing": [3.0, float("inf")]}}
    assert problem_text(job, result) is None


@pytest.mark.parametrize(("series", "problem"), [
    ({"with_zeroing": [1.0]},
     "the code of demo 'hidden-bug-demo' leaves no variable `without_zeroing`; make the code "
     "set it to a list"),
    ({"with_zeroing": [1.0], "without_zeroing": "a dict"},
     "the code of demo 'hidden-bug-demo' leaves `without_zeroing` as a dict, not a list of "
     "numbers"),
    ({"with_zeroing": [], "without_zeroing": [1.0]},
     "the code of demo 'hidden-bug-demo' leaves `with_zeroing` empty: there is nothing to show"),
])
def test_a_series_that_cannot_be_drawn_is_a_problem(grad_jobs: dict[str, Job],
                                                    series: dict[str, object],
                                                    problem: str) -> None:
    job = grad_jobs["the code of demo 'hidden-bug-demo'"]
    assert problem_text(job, {"shown": None, "series": series}) == problem


def test_code_that_fails_is_a_problem(grad_jobs: dict[str, Job]) -> None:
    job = grad_jobs["the loop of 'order-the-loop' in its correct order"]
    assert problem_text(job, {"error": "NameError: name 'model' is not defined"}) == (
        "the loop of 'order-the-loop' in its correct order does not run: NameError: name "
        "'model' is not defined")
    momentum = grad_jobs["the code of demo 'momentum-demo'"]
    assert problem_text(momentum, {"shown": None, "series": {}}) is None
    assert problem_text(momentum, {"error": "ZeroDivisionError: division by zero"}) == (
        "the code of demo 'momentum-demo' does not run: ZeroDivisionError: division by zero")


@pytest.mark.slow
def test_validate_proves_the_fixture_course_and_reports_a_broken_demo(cli: Cli,
                                                                      tmp_path: Path) -> None:
    code, out, err = cli("validate", str(FIXTURES))
    assert code == 0, err
    assert out.startswith("[OK] 2 lessons OK"), err
    broken = tmp_path / "course"
    broken.mkdir()
    for name in ("basics.yaml", "second.yaml"):
        (broken / name).write_text((FIXTURES / name).read_text(encoding="utf-8")
                                   .replace("      losses = []\n", ""), encoding="utf-8")
    code, _, err = cli("validate", str(broken))
    assert code == 2
    assert any(line.endswith("the code of demo 'descent' does not run: NameError: name "
                             "'losses' is not defined") for line in err.splitlines()), err
