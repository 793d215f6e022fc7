"""`gradtutor grade`: a class graded at once; its reports, its seed, and what one student's code
can see of another's."""

from __future__ import annotations

import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, TypedDict

import pytest
from grading_support import EXERCISES, HOSTILE, make_class, run_cli
from rich.console import Console
from waits import as_from_a_terminal

from gradtutor import grading
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check, Status, Verdict
from gradtutor.grading import StudentResult
from gradtutor.lessons.course import load_course
from gradtutor.runtime.sandbox import landlock_abi
from gradtutor.submissions import Submission
from gradtutor.ui import grade_view
from gradtutor.ui.render import Look

SEED = 7


class Graded(TypedDict):
    """What one run of `gradtutor grade` over the class left."""

    code: int
    out: str
    err: str
    base: Path


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    """One run over the class, every report asked for at once."""
    base = tmp_path_factory.mktemp("grade")
    make_class(base / "class")
    code, out, err = run_cli(
        "grade", str(base / "class"), *(f"--exercise={e}" for e in EXERCISES), "--jobs", "2",
        "--seed", str(SEED), "--timeout", "3", "--json", "--csv", str(base / "grades.csv"),
        "--junit", str(base / "grades.xml"), home=base / "home")
    return {"code": code, "out": out, "err": err, "base": base}


def found(element: ET.Element, path: str) -> ET.Element:
    """The element at `path` under `element`, which the report has."""
    child = element.find(path)
    assert child is not None, path
    return child


def by_student(report: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    students = report["students"]
    assert isinstance(students, list)
    return {s["student"]: {e["exercise"]: e for e in s["exercises"]} for s in students}


@pytest.mark.slow
def test_a_class_is_graded_whatever_the_students_did(graded: Graded) -> None:
    assert graded["code"] == 0, graded["err"]  # grading worked, though most did not pass
    report = json.loads(graded["out"])
    assert report["seed"] == SEED and report["exercises"] == list(EXERCISES)
    results = by_student(report)
    assert sorted(results) == ["alice", "bob", "carol", "dave"]
    assert all(e["passed"] for e in results["alice"].values())
    exercises = load_course(rules=EXERCISE_RULES).exercises()
    for eid, verdict in results["bob"].items():  # each mistake fails on the check it names
        named = exercises[eid].mutants[0].fails
        assert not verdict["passed"]
        assert any(c["name"] == named and c["status"] == "fail" for c in verdict["checks"])
    assert results["carol"]["read-grad"]["status"] == "timeout"
    assert [c["name"] for c in results["carol"]["two-backwards"]["checks"]] == ["process"]
    assert results["dave"]["read-grad"]["passed"]
    missing = results["dave"]["two-backwards"]
    assert missing["status"] == "error" and missing["checks"][0]["name"] == "file"
    assert "no file two-backwards.py" in missing["checks"][0]["message"]
    totals = {s["student"]: (s["passed_count"], s["total"]) for s in report["students"]}
    assert totals == {"alice": (2, 2), "bob": (0, 2), "carol": (0, 2), "dave": (1, 2)}


@pytest.mark.slow
def test_a_student_finds_nothing_of_the_others(graded: Graded) -> None:
    output = by_student(json.loads(graded["out"]))["dave"]["read-grad"]["output"]
    assert "FOUND []" in output
    if os.geteuid() != 0:  # root lists any folder; see docs/isolation.md
        assert "RUN FOLDER denied" in output
    if landlock_abi() > 0:  # reading is walled in: even root reads no other folder
        assert "RUN FOLDER denied" in output
        for what in ("CLASS", "ALICE", "TEMP"):
            assert f"{what} denied" in output, output


@pytest.mark.slow
def test_the_csv_has_a_row_per_student_and_a_column_per_exercise(graded: Graded) -> None:
    text = (graded["base"] / "grades.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["student", *EXERCISES, "total"], ["alice", "1", "1", "2"],
                    ["bob", "0", "0", "0"], ["carol", "0", "0", "0"], ["dave", "1", "0", "1"]]


@pytest.mark.slow
def test_the_junit_xml_has_a_suite_per_student_and_a_failure_per_miss(
    graded: Graded,
) -> None:
    root = ET.parse(graded["base"] / "grades.xml").getroot()
    # carol's loop (a timeout) and crash are errors; bob's mistakes and dave's missing file
    # failures: the counts of the whole agree with each suite's and with the elements
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites", "8", "3", "2")
    for suite in root.iter("testsuite"):
        assert suite.get("failures") == str(len(suite.findall("testcase/failure")))
        assert suite.get("errors") == str(len(suite.findall("testcase/error")))
    suites = {s.get("name", ""): s for s in root.iter("testsuite")}
    assert sorted(suites) == ["alice", "bob", "carol", "dave"]
    for suite in suites.values():
        assert [c.get("name") for c in suite.iter("testcase")] == list(EXERCISES)
        assert found(suite, "properties/property[@name='seed']").get("value") == str(SEED)
    assert suites["alice"].find("testcase/failure") is None
    missing = found(suites["dave"], "testcase[@name='two-backwards']/failure")
    assert missing.get("message") == "file: no file two-backwards.py"
    hang = found(suites["carol"], "testcase[@name='read-grad']/error")
    assert hang.get("type") == "timeout" and hang.get("message", "").startswith("time-limit:")


@pytest.mark.slow
def test_the_same_seed_grades_the_same_inputs_again(graded: Graded,
                                                    tmp_path: Path) -> None:
    first = by_student(json.loads(graded["out"]))
    folder = graded["base"] / "class"
    # the students named one by one this time
    code, out, err = run_cli("grade", str(folder / "alice"), str(folder / "bob"),
                             *(f"--exercise={e}" for e in EXERCISES), "--seed", str(SEED),
                             "--jobs", "1", "--json", home=tmp_path)
    assert code == 0, err
    again = by_student(json.loads(out))
    for student in ("alice", "bob"):
        for eid in EXERCISES:
            assert again[student][eid]["checks"] == first[student][eid]["checks"]
            assert again[student][eid]["seed"] == SEED


@pytest.mark.slow
def test_without_a_seed_one_is_chosen_printed_and_used(tmp_path: Path) -> None:
    make_class(tmp_path / "class")
    code, out, err = run_cli("grade", str(tmp_path / "class" / "alice"), "--exercise",
                             "read-grad", "--json", home=tmp_path / "home")
    assert code == 0, err
    seed = json.loads(out)["seed"]
    assert f"--seed {seed}" in err
    assert json.loads(out)["students"][0]["exercises"][0]["seed"] == seed


@pytest.mark.slow
def test_the_summary_table_shows_each_student_and_the_total(tmp_path: Path) -> None:
    make_class(tmp_path / "class")
    code, out, err = run_cli("grade", str(tmp_path / "class" / "alice"),
                             str(tmp_path / "class" / "dave"), "--exercise", "read-grad",
                             "--exercise", "two-backwards", "--seed", "3", home=tmp_path / "h")
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.split()[:1] == ["alice"] and line.rstrip().endswith("2/2") for line in lines)
    assert any(line.split()[:1] == ["dave"] and line.rstrip().endswith("1/2") for line in lines)
    assert "1 read-grad  2 two-backwards" in out
    assert "1 of 2 students passed every exercise; 3 of 4 checks passed" in out
    assert "graded alice" in err and "graded dave" in err


@pytest.mark.slow
def test_a_checker_that_cannot_start_is_the_graders_failure_not_the_students(
        tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    make_class(tmp_path / "class")
    # the workers' environment is the one the CLI was given
    code, out, err = run_cli("grade", str(tmp_path / "class" / "alice"), "--exercise",
                             "read-grad", "--json", "--csv", str(tmp_path / "g.csv"),
                             home=tmp_path / "home", environ={"PYTHONPATH": os.pathsep.join(
                                 filter(None, [str(fake), os.environ.get("PYTHONPATH")]))})
    assert code == 70
    assert out == "" and not (tmp_path / "g.csv").exists()  # no one is marked down
    assert "could not check alice's read-grad" in err and "Traceback" not in err


# ---- the pure part: no process runs ---------------------------------------------------------

def _result(name: str, statuses: dict[str, Status], output: str = "") -> StudentResult:
    verdicts = tuple(
        Verdict(eid, status, (Check("returns-grad", "pass" if status == "pass" else status,
                                    f"{eid} said {status}"),), 5, 120, output=output)
        for eid, status in statuses.items())
    return StudentResult(Submission(name, Path(name)), verdicts)


def test_junit_xml_stays_valid_whatever_a_student_printed() -> None:
    result = _result("eve", {"read-grad": "fail"}, output="\x1b[2J\x00bell\x07 <&> done")
    root = ET.fromstring(grading.report_junit([result], 5))
    case = found(root, "testsuite/testcase")
    assert found(case, "failure").get("message") == "returns-grad: read-grad said fail"
    assert "<&> done" in (found(case, "system-out").text or "")


def test_the_summary_fits_80_columns_and_folds_when_exercises_do_not() -> None:
    ids = [f"exercise-number-{n}" for n in range(1, 9)]
    results = [_result("a-student-with-a-very-long-folder-name-indeed",
                       dict.fromkeys(ids, "pass")),
               _result("bo", {eid: "fail" for eid in ids})]

    def draw(width: int, plain: bool) -> str:
        buffer = io.StringIO()
        console = Console(width=width, file=buffer, color_system=None)
        for part in grade_view.summary(results, ids, Look(plain), width):
            console.print(part)
        return buffer.getvalue()

    for plain in (True, False):
        text = draw(80, plain)
        table = text.split("1 exercise-number-1")[0]
        assert max(len(line) for line in table.splitlines()) <= 80
        assert "8/8" in text and "0/8" in text and "a-student-with" in text
        assert text.count("student") >= 1 and text.count("total") == 1
    narrow = draw(40, True)
    assert narrow.count("total") == 1 and narrow.count("bo ") >= 2  # folded into two tables
    assert all(len(line) <= 40 for line in narrow.split("1 exercise")[0].splitlines())


def test_only_plain_files_are_copied_a_link_to_another_students_file_is_refused(
    tmp_path: Path,
) -> None:
    from gradtutor.lessons.course import load_course
    from gradtutor.runtime.pool import copy_student

    exercises = [e for eid, e in load_course(rules=EXERCISE_RULES).exercises().items()
                 if eid in EXERCISES]
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "read-grad.py").write_text("bob's work\n")
    (tmp_path / "mallory").mkdir()
    (tmp_path / "mallory" / "read-grad.py").symlink_to(tmp_path / "bob" / "read-grad.py")
    (tmp_path / "mallory" / "two-backwards.py").write_text("mine\n")
    (tmp_path / "run").mkdir()
    copies = copy_student(Submission("mallory", tmp_path / "mallory"), exercises,
                          tmp_path / "run")
    assert copies["read-grad"] == (None, "read-grad.py is a link; hand in the file itself")
    copy, problem = copies["two-backwards"]
    assert problem is None and copy is not None and copy.read_text() == "mine\n"
    assert copy.parent.parent == tmp_path / "run" and copy.parent != tmp_path / "mallory"


def descendants_of(root: int) -> list[int]:
    """Every process below `root` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return sorted(found)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self"), reason="reads /proc (Linux)")
def test_ctrl_c_stops_grading_at_once_writes_no_report_and_leaves_nothing(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    for name in ("a", "b"):
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "read-grad.py").write_bytes(
            (HOSTILE / "infinite_loop.py").read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradtutor", "grade", str(tmp_path / "class"), "--exercise",
         "read-grad", "--timeout", "120", "--csv", str(tmp_path / "grades.csv")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "GRADTUTOR_HOME": str(tmp_path / "home")},
        preexec_fn=as_from_a_terminal)
    workers: list[int] = []
    for _ in range(600):  # until both jobs check (a minute at most): two fork servers (the
        # second forked from the first), their reference processes, and a check in each
        workers = descendants_of(proc.pid)
        if len(workers) == 6:
            break
        time.sleep(0.1)
    assert len(workers) == 6, workers
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "grading was interrupted; no report was written" in err and "Traceback" not in err
    assert out == "" and not (tmp_path / "grades.csv").exists()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)
