"""`grade`'s report formats as one table (`grading.REPORTS`), its one destination rule, and the
one way a missing file is said. The reports' contents are pinned in test_grade.py and
test_submissions.py; here, what holds for every format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gradtutor import grading
from gradtutor.checking.verdict import Check, Verdict
from gradtutor.errors import GradtutorError
from gradtutor.grading import REPORTS, StudentResult, report_destinations
from gradtutor.i18n import ENGLISH
from gradtutor.submissions import Submission

if TYPE_CHECKING:
    from conftest import Cli

COURSE = ["--lessons", str(Path(__file__).parent / "fixtures" / "course")]


def _results() -> list[StudentResult]:
    passed = Verdict("read-grad", "pass", (Check("returns-grad", "pass", "said"),), 1, 10)
    return [StudentResult(Submission("ann", Path("ann")), (passed,)),
            StudentResult(Submission("bob", Path("bob")),
                          (grading.missing_verdict("read-grad", 1),))]


@pytest.mark.parametrize("name", REPORTS)
def test_every_format_renders_every_student_from_the_same_arguments(name: str) -> None:
    text = REPORTS[name].render(_results(), ["read-grad"], 1, ENGLISH)
    assert "ann" in text and "bob" in text and text.endswith("\n")


@pytest.mark.parametrize("name", REPORTS)
def test_every_format_goes_somewhere(name: str) -> None:
    assert REPORTS[name].stdout is not None or REPORTS[name].to_file


def test_at_most_one_report_takes_standard_output() -> None:
    files = {"csv": Path("g.csv"), "junit": Path("g.xml"), "json": None}
    assert report_destinations(files) == files
    with pytest.raises(GradtutorError) as refused:
        report_destinations({"csv": None, "json": None})
    assert (str(refused.value), refused.value.hint) == (
        "--json and --csv - both want standard output", "write the CSV to a file: --csv FILE")


def test_grade_refuses_two_reports_on_standard_output_before_grading(
        cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("grade", str(tmp_path), "--json", "--csv", "-", *COURSE)
    assert code == 2 and out == ""
    assert "--json and --csv - both want standard output" in err
    assert "write the CSV to a file: --csv FILE" in err and "Grading:" not in err


def test_check_all_and_grade_say_a_missing_file_one_way(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--json", *COURSE)
    check = json.loads(out)["exercises"][0]["checks"][0]
    assert code == 1 and check["message"] == f"no file {tmp_path / 'square-grad.py'}"
    assert check["help"] == "write your solution there, or point --workspace at your folder"
    graded = grading.missing_verdict("square-grad", 1).checks[0]
    assert (graded.message, graded.help) == ("no file square-grad.py", "")


def test_check_all_and_grade_give_a_student_in_one_json_shape(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--json", "--seed", "4",
                       *COURSE)
    payload = json.loads(out)
    assert list(payload) == ["passed", "total", "passed_count", "seed", "lang", "exercises"]
    assert (payload["passed"], payload["total"], payload["seed"]) == (False, 1, 4)
    student = grading.report_json(_results(), ["read-grad"], 1)["students"][1]
    assert list(student) == ["student", "passed", "total", "passed_count", "exercises"]
    assert (student["student"], student["passed"], student["passed_count"]) == ("bob", False, 0)
    assert student["exercises"][0]["checks"][0]["message"] == "no file read-grad.py"
