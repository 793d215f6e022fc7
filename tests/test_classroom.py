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


def offline_runs() -> list[str]:
    """The workflow's own shell steps that need no network (not the installs)."""
    return [s["run"] for s in steps() if "run" in s and "pip install" not in s["run"]]


def run_workflow(repo: Path, tmp_path: Path) -> tuple[dict[str, int], str]:
    """Run the workflow's offline steps in `repo` as the runner would (bash, in the checkout,
    `gradtutor` on PATH: here this very tree's), then each autograding test's command; the
    exit code of each test by name, and the job summary written."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gradtutor"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gradtutor "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"
    python.symlink_to(sys.executable)
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "GITHUB_STEP_SUMMARY": str(summary),
           "GRADTUTOR_HOME": str(tmp_path / "home")}
    for script in offline_runs():
        done = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    codes: dict[str, int] = {}
    for step in graders():
        done = subprocess.run(["bash", "-c", step["with"]["command"]], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=60)
        codes[step["id"]] = done.returncode
    return codes, summary.read_text(encoding="utf-8")


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
