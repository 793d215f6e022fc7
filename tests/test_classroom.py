"""The GitHub Classroom workflow in docs/: its shape, and its own command lines run here on a
student's repository (all but the steps that need the network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "docs" / "classroom-workflow.yml"
GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


def steps() -> list[dict[str, Any]]:
    """The workflow's steps, as YAML gives them."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    found: list[dict[str, Any]] = job["steps"]
    return found


def graders() -> list[dict[str, Any]]:
    return [s for s in steps() if s.get("uses") == GRADER]


def test_every_exercise_is_one_autograding_test_worth_one_point_and_reported() -> None:
    ids = list(load_course(rules=EXERCISE_RULES).exercises())
    tests = graders()
    assert [s["id"] for s in tests] == ids
    for step in tests:
        assert step["with"]["test-name"] == step["id"] and step["with"]["max-score"] == 1
        assert f"'{step['id']}'" in step["with"]["command"]
    (reporter,) = [s for s in steps() if s.get("uses") == REPORTER]
    assert reporter["with"]["runners"].split(",") == ids
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{ steps.{i}.outputs.result }}}}"
                               for i in ids}


def offline_runs() -> list[dict[str, Any]]:
    """The workflow's own shell steps that need no network (not the installs)."""
    return [s for s in steps() if "run" in s and "pip install" not in s["run"]]


def on_runner(text: str, temp: Path) -> str:
    """`text` with the runner's temporary folder in place of its expression."""
    return text.replace("${{ runner.temp }}", str(temp))


def run_workflow(repo: Path, tmp_path: Path) -> tuple[dict[str, int], str]:
    """Run the workflow's offline steps as the runner would (bash, in each step's working
    folder, the checkout as GITHUB_WORKSPACE, `python` on PATH: here this environment's, with
    this tree installed), then each autograding test's command in the checkout; the exit code
    of each test by name, and the job summary written."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_WORKSPACE": str(repo), "RUNNER_TEMP": str(temp),
           "GITHUB_STEP_SUMMARY": str(summary), "GRADTUTOR_HOME": str(tmp_path / "home")}
    for step in offline_runs():
        folder = on_runner(step.get("working-directory", str(repo)), temp)
        done = subprocess.run(["bash", "-e", "-c", on_runner(step["run"], temp)], cwd=folder,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    codes: dict[str, int] = {}
    for step in graders():
        done = subprocess.run(["bash", "-c", on_runner(step["with"]["command"], temp)],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=60)
        codes[step["id"]] = done.returncode
    return codes, summary.read_text(encoding="utf-8")


def test_no_step_of_the_workflow_runs_python_from_the_checkout() -> None:
    """Every Python the workflow runs is isolated (-I: no working folder, PYTHONPATH or user
    site on sys.path) and every shell step works in the runner's temporary folder, so nothing
    the student commits (json.py, pip.py, sitecustomize.py, gradtutor/) is ever imported; and
    gradtutor is installed from GRADTUTOR, never from the repository."""
    for step in steps():
        for line in [*step.get("run", "").splitlines(), step.get("with", {}).get("command", "")]:
            words = line.split()
            for at, word in enumerate(words):
                if word in ("python", "python3"):
                    assert words[at + 1] == "-I", line
        if "run" in step:
            assert step["working-directory"] == "${{ runner.temp }}", step["name"]
    install = next(s["run"] for s in steps() if "pip install" in s.get("run", ""))
    assert 'pip install "$GRADTUTOR"' in install and " . " not in install + " "


@pytest.mark.slow
def test_the_workflow_gives_every_point_to_reference_solutions(tmp_path: Path) -> None:
    repo = tmp_path / "student-repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "classroom.yml").write_text(WORKFLOW.read_text())
    (repo / "README.md").write_text("my assignment\n")
    for eid, exercise in load_course(rules=EXERCISE_RULES).exercises().items():
        (repo / f"{eid}.py").write_text(exercise.solution, encoding="utf-8")
    codes, summary = run_workflow(repo, tmp_path)
    assert codes == dict.fromkeys(load_course(rules=EXERCISE_RULES).exercises(), 0)
    total = len(load_course(rules=EXERCISE_RULES).exercises())
    assert f"{total} of {total} exercises passed" in summary and "| read-grad | ✓ |" in summary


@pytest.mark.slow
def test_the_workflow_gives_no_point_for_a_file_not_handed_in_or_wrong(tmp_path: Path) -> None:
    repo = tmp_path / "student-repo"
    repo.mkdir()
    exercises = load_course(rules=EXERCISE_RULES).exercises()
    (repo / "read-grad.py").write_text(exercises["read-grad"].solution, encoding="utf-8")
    (repo / "two-backwards.py").write_text(exercises["two-backwards"].starter,
                                           encoding="utf-8")
    codes, summary = run_workflow(repo, tmp_path)
    assert codes == {eid: 0 if eid == "read-grad" else 1 for eid in exercises}
    assert f"1 of {len(exercises)} exercises passed" in summary
    assert "| none-before-backward | ✗ error | no file none-before-backward.py |" in summary


# What a student commits to forge points: modules that shadow what the workflow's own Python
# imports (json, sys's site hooks, pip, gradtutor itself), pytest's conftest, a .pth file,
# and a report of their own, each claiming every exercise passed.
FORGED_REPORT = (
    '{"seed": 1, "students": [{"student": "me", "passed": true, "total": 1, "passed_count": 1,'
    ' "exercises": []}]}')
FORGERIES = {
    "json.py": "import sys\ndef load(f, **k):\n    class All(list):\n"
               "        def __iter__(self):\n            return iter([dict(exercise=e, passed=True)"
               " for e in sys.argv + ['x']])\n    sys.exit(0)\n",
    "sitecustomize.py": "import sys\nsys.exit(0)\n",
    "usercustomize.py": "import sys\nsys.exit(0)\n",
    "pip.py": "import sys\nsys.exit(0)\n",
    "gradtutor/__init__.py": "import sys\nprint(" + repr(FORGED_REPORT) + ")\nsys.exit(0)\n",
    "gradtutor/__main__.py": "import sys\nprint(" + repr(FORGED_REPORT) + ")\nsys.exit(0)\n",
    "conftest.py": "import sys\nsys.exit(0)\n",
    "forge.pth": "import sys; sys.exit(0)\n",
    "gradtutor-report.json": FORGED_REPORT,
    "encodings/__init__.py": "import sys\nsys.exit(0)\n",
}


@pytest.mark.slow
def test_no_point_is_forged_by_modules_committed_in_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "student-repo"
    repo.mkdir()
    for name, text in FORGERIES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    exercises = load_course(rules=EXERCISE_RULES).exercises()
    (repo / "read-grad.py").write_text(exercises["read-grad"].solution, encoding="utf-8")
    codes, summary = run_workflow(repo, tmp_path)
    assert codes == {eid: 0 if eid == "read-grad" else 1 for eid in exercises}
    assert f"1 of {len(exercises)} exercises passed" in summary
