"""Start-up stays light: the commands that only read lessons and progress never import torch.

Each command runs under `python -X importtime`, whose log on stderr names every module
imported. This is not a timed test; `benchmarks/startup.py` measures the times.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from import_log import imported_modules, run_logging_imports

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import GradtutorError, LessonProblems
from gradtutor.lessons.course import load_course

FIXTURES = str(Path(__file__).parent / "fixtures" / "course")


def torch_of(modules: list[str]) -> list[str]:
    """The modules of torch's among `modules`."""
    return [m for m in modules if m == "torch" or m.startswith("torch.")]


def shipped_course_has_grad() -> None:
    folder = os.environ.get("GRADTUTOR_LESSONS")
    try:
        course = load_course(Path(folder) if folder else None, rules=EXERCISE_RULES)
    except LessonProblems:
        raise
    except GradtutorError as exc:
        pytest.skip(f"no shipped course yet: {exc.message}")
    if "grad" not in {lesson.id for lesson in course.lessons}:
        pytest.skip("the shipped course has no 'grad' lesson yet")


@pytest.mark.parametrize("args", [
    ["--help"],
    ["list"],
    ["show", "grad", "--step", "1", "--plain"],
])
def test_the_shipped_course_never_imports_torch(args: list[str], tmp_path: Path) -> None:
    if args != ["--help"]:
        shipped_course_has_grad()
    torch = torch_of(imported_modules(args, tmp_path))
    assert torch == [], f"`gradtutor {' '.join(args)}` imports torch"


@pytest.mark.slow
def test_validate_proves_the_shipped_course_without_importing_torch(tmp_path: Path) -> None:
    """`validate` proves every exercise of the shipped course (the proofs run in checking
    processes of their own) while the tutor imports no torch; it says how many proofs, then a
    line as each lesson file's proofs begin, so that a log shows progress."""
    shipped_course_has_grad()
    modules, out, err = run_logging_imports(["validate"], tmp_path)
    assert torch_of(modules) == []
    lessons = len(load_course(rules=EXERCISE_RULES).lessons)
    assert len(err) == 1 + lessons, err
    assert err[0].startswith("running ")
    assert all(line.startswith("proving ") for line in err[1:])
    assert out.startswith(f"[OK] {lessons} lessons OK (") and "proofs passed" in out


@pytest.mark.parametrize("args", [
    ["list", "--lessons", FIXTURES],
    ["show", "basics", "--step", "2", "--plain", "--lessons", FIXTURES],
    ["show", "second", "--lessons", FIXTURES],  # every kind of practice step
    ["validate", FIXTURES],
])
def test_the_fixture_course_never_imports_torch(args: list[str], tmp_path: Path) -> None:
    torch = torch_of(imported_modules(args, tmp_path))
    assert torch == [], f"`gradtutor {' '.join(args)}` imports torch"


def test_show_takes_an_unchanged_lessons_earlier_pass_without_importing_checking(
        tmp_path: Path) -> None:
    """The first `show` of a lesson checks its declared checks with checking's modules; the
    next, of the same lesson, unchanged, takes that answer from the lesson cache and imports
    none of them (several milliseconds of a first slide)."""
    args = ["show", "second", "--step", "1", "--plain", "--lessons", FIXTURES]

    def checkers(modules: list[str]) -> list[str]:
        return [m for m in modules if m.startswith("gradtutor.checking.checkers.")]

    assert "gradtutor.checking.checkers.declared" in checkers(imported_modules(args, tmp_path))
    assert checkers(imported_modules(args, tmp_path)) == []
