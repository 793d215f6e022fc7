"""Start-up stays light: the commands that only read lessons and progress never import torch.

Each command runs under `python -X importtime`, whose log on stderr names every module
imported. This is not a timed test; `benchmarks/startup.py` measures the times.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import GradtutorError, LessonProblems
from gradtutor.lessons.course import load_course

FIXTURES = str(Path(__file__).parent / "fixtures" / "course")


def imported_modules(args: list[str], home: Path) -> list[str]:
    """Every module `python -m gradtutor *args` imports; the command must succeed."""
    return run_logging_imports(args, home)[0]


def run_logging_imports(args: list[str], home: Path) -> tuple[list[str], str, list[str]]:
    """`python -m gradtutor *args`, which must succeed: every module it imports, its stdout,
    and the lines of its stderr that are not the import log."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIMPORTTIME"}
    env["GRADTUTOR_HOME"] = str(home)
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "gradtutor", *args],
                            capture_output=True, text=True, encoding="utf-8", env=env,
                            stdin=subprocess.DEVNULL, timeout=60)
    log = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    others = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    assert result.returncode == 0, "\n".join(others)
    # import time: self [us] | cumulative | imported package   (nested imports are indented)
    modules = [line.rsplit("|", 1)[1].strip() for line in log[1:]]
    assert "gradtutor.cli" in modules  # the log was read right
    return modules, result.stdout, others


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
