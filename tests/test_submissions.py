"""The submissions teachers have: a folder, a zip or an LMS bulk download per class, and names
that no report shows raw; what is ambiguous about the class is refused before anything runs,
and what is wrong with one student's submission costs only that student."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gradtutor import grading
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check, Verdict
from gradtutor.errors import GradtutorError
from gradtutor.grading import StudentResult
from gradtutor.i18n import msg
from gradtutor.lessons.course import load_course
from gradtutor.submissions import Submission, find_submissions, shown_name, stage
from gradtutor.workspace import MAX_FILE_BYTES

if TYPE_CHECKING:
    from conftest import Cli

IDS = ("read-grad", "two-backwards")


def write(path: Path, text: str = "x = 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(folder: Path) -> list[str]:
    return [s.name for s in find_submissions([folder], IDS)]


# ---- which layout, which students ----------------------------------------------------------

def test_a_folder_per_student_and_one_students_own_folder(tmp_path: Path) -> None:
    write(tmp_path / "class" / "bob" / "read-grad.py")
    (tmp_path / "class" / "amy").mkdir()  # handed in nothing: still a student
    (tmp_path / "class" / ".git").mkdir()
    write(tmp_path / "class" / "notes.txt")  # the teacher's own notes are no student
    assert names(tmp_path / "class") == ["amy", "bob"]
    # a student's own folder, with a folder of its own beside the exercise files
    write(tmp_path / "solo" / "read-grad.py")
    write(tmp_path / "solo" / "__pycache__" / "read-grad.cpython-311.pyc")
    assert find_submissions([tmp_path / "solo"], IDS) == [
        Submission("solo", tmp_path / "solo")]


def test_a_students_own_folder_may_keep_a_copy_of_their_work_in_a_folder(tmp_path: Path) -> None:
    write(tmp_path / "repo" / "read-grad.py")
    write(tmp_path / "repo" / "old" / "read-grad.py")  # a student's backup, in a Classroom clone
    assert names(tmp_path / "repo") == ["repo"]


def test_a_stray_exercise_file_at_the_top_of_a_class_is_named_not_made_a_student(
    tmp_path: Path,
) -> None:
    write(tmp_path / "class" / "bob" / "read-grad.py")
    write(tmp_path / "class" / "amy" / "read-grad.py")
    write(tmp_path / "class" / "two-backwards.py")
    with pytest.raises(GradtutorError, match="two-backwards.py lies at the top of") as error:
        find_submissions([tmp_path / "class"], IDS)
    assert "move it into its student's folder" in str(error.value.hint)


def test_an_empty_class_and_a_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "class").mkdir()
    with pytest.raises(GradtutorError, match="there is no submission in"):
        find_submissions([tmp_path / "class"], IDS)
    write(tmp_path / "notes.txt")
    with pytest.raises(GradtutorError, match="is not a folder"):
        find_submissions([tmp_path / "notes.txt"], IDS)


def test_a_student_folder_or_zip_that_is_a_link_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "class" / "bob" / "read-grad.py")
    (tmp_path / "class" / "mallory").symlink_to(tmp_path / "class" / "bob")
    with pytest.raises(GradtutorError, match="mallory is a link"):
        find_submissions([tmp_path / "class"], IDS)
    (tmp_path / "class" / "mallory").unlink()
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as handed:
        handed.writestr("read-grad.py", "x = 1\n")
    (tmp_path / "class" / "eve.zip").symlink_to(tmp_path / "bob.zip")
    with pytest.raises(GradtutorError, match="eve.zip is a link"):
        find_submissions([tmp_path / "class"], IDS)


def test_two_submissions_of_one_name_are_named_by_their_paths_and_not_graded(
        tmp_path: Path) -> None:
    write(tmp_path / "a" / "solo" / "read-grad.py")
    write(tmp_path / "b" / "solo" / "read-grad.py")
    found = find_submissions([tmp_path / "a" / "solo", tmp_path / "b" / "solo"], IDS)
    assert [s.name for s in found] == [str(tmp_path / "a" / "solo"), str(tmp_path / "b" / "solo")]
    assert all("also named solo" in str(s.problem) for s in found)
    write(tmp_path / "c" / "amy" / "read-grad.py")
    write(tmp_path / "c" / "bob" / "read-grad.py")
    with zipfile.ZipFile(tmp_path / "c" / "amy.zip", "w") as handed:
        handed.writestr("read-grad.py", "x = 1\n")
    found = find_submissions([tmp_path / "c"], IDS)
    by_name = {s.name: s.problem for s in found}
    assert by_name == {"bob": None, **{str(tmp_path / "c" / entry): by_name[
        str(tmp_path / "c" / entry)] for entry in ("amy", "amy.zip")}}
    assert all("also named amy" in str(by_name[str(tmp_path / "c" / e)])
               for e in ("amy", "amy.zip"))


def test_moodle_students_of_one_display_name_are_told_apart_by_their_id(
        tmp_path: Path) -> None:
    write(tmp_path / "class" / "Jane Smith_77_assignsubmission_file_" / "read-grad.py")
    write(tmp_path / "class" / "Jane Smith_78_assignsubmission_file_" / "read-grad.py")
    write(tmp_path / "class" / "Joe Lee_79_assignsubmission_file_" / "read-grad.py")
    found = find_submissions([tmp_path / "class"], IDS)
    assert [(s.name, s.problem) for s in found] == [
        ("Jane Smith_77", None), ("Jane Smith_78", None), ("Joe Lee", None)]


def test_a_zip_per_student_is_a_student_each(tmp_path: Path) -> None:
    _mkdir(tmp_path / "class")
    for who in ("amy", "bob"):
        with zipfile.ZipFile(tmp_path / "class" / f"{who}.zip", "w") as handed:
            handed.writestr(f"{who}/read-grad.py", f"who = {who!r}\n")
    found = find_submissions([tmp_path / "class"], IDS)
    assert [(s.name, s.archive) for s in found] == [
        ("amy", tmp_path / "class" / "amy.zip"), ("bob", tmp_path / "class" / "bob.zip")]


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_a_canvas_bulk_download_is_a_student_per_name_and_id(tmp_path: Path) -> None:
    folder = tmp_path / "submissions"
    write(folder / "smithjane_1001_5001_read-grad.py", "first\n")
    write(folder / "smithjane_1001_5002_read-grad-1.py", "resubmitted\n")
    write(folder / "smithjane_1001_5003_two-backwards.py")
    write(folder / "leejoe_LATE_1002_5004_read-grad.py", "late\n")
    write(folder / "leejoe_1003_5005_read-grad.py")  # another Joe Lee: told apart by id
    write(folder / "smithjane_1001_5006_notes.txt")  # not an exercise: not graded
    found = {s.name: s for s in find_submissions([folder], IDS)}
    assert sorted(found) == ["leejoe_1002", "leejoe_1003", "smithjane"]
    assert dict(found["smithjane"].files) == {
        "read-grad.py": folder / "smithjane_1001_5002_read-grad-1.py",
        "two-backwards.py": folder / "smithjane_1001_5003_two-backwards.py"}
    staged = {s.name: s for s in stage(list(found.values()), IDS, _mkdir(tmp_path / "root"))}
    jane = staged["smithjane"].folder
    assert (jane / "read-grad.py").read_text() == "resubmitted\n"  # the latest is graded
    assert sorted(p.name for p in jane.iterdir()) == ["read-grad.py", "two-backwards.py"]
    assert (staged["leejoe_1002"].folder / "read-grad.py").read_text() == "late\n"


def test_a_moodle_download_as_folders_or_loose_files(tmp_path: Path) -> None:
    folders = tmp_path / "folders"
    write(folders / "Jane Smith_77_assignsubmission_file_" / "read-grad.py")
    write(folders / "Jane Smith_77_assignsubmission_onlinetext_" / "onlinetext.html")
    write(folders / "Joe Lee_78_assignsubmission_file_" / "two-backwards.py")
    assert names(folders) == ["Jane Smith", "Joe Lee"]
    loose = tmp_path / "loose"
    write(loose / "Jane Smith_77_assignsubmission_file_read-grad.py")
    handed = loose / "Jane Smith_77_assignsubmission_file_read-grad.py"
    found = find_submissions([loose], IDS)
    assert [(s.name, dict(s.files)) for s in found] == [
        ("Jane Smith", {"read-grad.py": handed})]


def test_a_zip_is_read_with_the_caps_of_a_learners_file_and_never_outside_its_folder(
    tmp_path: Path,
) -> None:
    class_folder = _mkdir(tmp_path / "class")
    with zipfile.ZipFile(class_folder / "amy.zip", "w", zipfile.ZIP_DEFLATED) as handed:
        handed.writestr("deep/er/read-grad.py", "deeper\n")
        handed.writestr("amy/read-grad.py", "nearest\n")
        handed.writestr("../../two-backwards.py", "0" * (MAX_FILE_BYTES * 8))  # a bomb, sort of
        link = zipfile.ZipInfo("amy/other.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        handed.writestr(link, "/etc/passwd")
        handed.writestr("__MACOSX/amy/._read-grad.py", "resource fork\n")
    (class_folder / "bad.zip").write_bytes(b"PK\x03\x04 not really a zip")
    staged = {s.name: s for s in stage(find_submissions([class_folder], IDS), IDS,
                                       _mkdir(tmp_path / "root"))}
    amy = staged["amy"].folder
    assert amy.parent == tmp_path / "root" and staged["amy"].problem is None
    assert (amy / "read-grad.py").read_text() == "nearest\n"  # the one nearest the top
    # no more than the cap and one byte are read out, inside amy's folder only
    assert (amy / "two-backwards.py").stat().st_size == MAX_FILE_BYTES + 1
    assert sorted(p.name for p in amy.iterdir()) == ["read-grad.py", "two-backwards.py"]
    assert not (tmp_path / "two-backwards.py").exists()
    problem = staged["bad"].problem
    assert problem is not None and "cannot read bad.zip" in str(problem)


def _damaged_zip(path: Path, method: int) -> None:
    """A zip whose directory is sound but whose compressed data is not (the review's n19 and
    n20): its deflate or LZMA stream fails only when an entry is read."""
    with zipfile.ZipFile(path, "w", method) as handed:
        handed.writestr("read-grad.py", "x = 1\n" * 100)
    data = bytearray(path.read_bytes())
    data[42:50] = b"\xff" * 8  # just past the local header and the name: the stream itself
    path.write_bytes(bytes(data))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_damaged_zip_or_a_fifo_costs_only_its_own_student(tmp_path: Path) -> None:
    class_folder = _mkdir(tmp_path / "class")
    _damaged_zip(class_folder / "deflate.zip", zipfile.ZIP_DEFLATED)
    _damaged_zip(class_folder / "lzma.zip", zipfile.ZIP_LZMA)
    os.mkfifo(class_folder / "fifo.zip")
    os.mkfifo(class_folder / "pipe_1001_5001_read-grad.py")  # a Canvas file that is a FIFO
    with zipfile.ZipFile(class_folder / "amy.zip", "w") as handed:
        handed.writestr("read-grad.py", "fine\n")
    staged = {s.name: s for s in stage(find_submissions([class_folder], IDS), IDS,
                                       _mkdir(tmp_path / "root"))}  # returns: nothing blocks
    assert staged["amy"].problem is None
    assert (staged["amy"].folder / "read-grad.py").read_text() == "fine\n"
    for name in ("deflate", "lzma"):
        assert f"cannot read {name}.zip" in str(staged[name].problem)
    assert "fifo.zip is not a plain file" in str(staged["fifo"].problem)
    assert "pipe_1001_5001_read-grad.py is not a plain file" in str(staged["pipe"].problem)


def test_copies_of_an_unreadable_zip_say_why_for_each_exercise(tmp_path: Path) -> None:
    from gradtutor.runtime.pool import copy_student

    exercises = [load_course(rules=EXERCISE_RULES).exercises()[eid] for eid in IDS]
    student = Submission("bad", tmp_path, problem=msg("cannot read bad.zip: no"))
    copies = copy_student(student, exercises, tmp_path)
    assert copies == {eid: (None, student.problem) for eid in IDS}


# ---- names no report shows raw ------------------------------------------------------------

def test_a_name_is_shown_with_its_controls_and_undecodable_bytes_written_out() -> None:
    assert shown_name("eve\x1b]0;owned\x07") == "eve\\x1b]0;owned\\x07"
    assert shown_name("ev\u202eil") == "ev\\u202eil"  # a bidi override cannot reorder a line
    assert shown_name(os.fsdecode(b"caf\xe9")) == "caf\\xe9"  # Latin-1 bytes, not UTF-8
    assert shown_name("李雷 O'Neil") == "李雷 O'Neil"


def _results(*names: str, status: str = "pass") -> list[StudentResult]:
    return [StudentResult(Submission(n, Path(n)), (Verdict(
        "read-grad", status, (Check("returns-grad", status, "said"),), 1, 10),))  # type: ignore[arg-type]
        for n in names]


def test_a_csv_cell_a_spreadsheet_would_run_is_kept_as_text() -> None:
    hostile = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2", "@SUM(A1)", "\tx", "\ry",
               "＝1", " =2+2", "\u00a0=3+3", "\u3000+4", "ann", "o'neil", " ann"]
    rows = list(csv.reader(io.StringIO(grading.report_csv(_results(*hostile), ["read-grad"]))))
    cells = [row[0] for row in rows[1:]]
    assert cells[:10] == ["'" + name for name in hostile[:10]]
    assert cells[10:] == ["ann", "o'neil", " ann"]  # only what a spreadsheet would run


def test_junit_keeps_a_dotted_name_whole_and_counts_errors_apart() -> None:
    results = _results("jane.doe", status="fail") + _results("max", status="timeout")
    root = ET.fromstring(grading.report_junit(results, 1))
    cases = list(root.iter("testcase"))
    assert "." not in (cases[0].get("classname") or "")  # Jenkins would split it into packages
    assert cases[0].get("classname") == "jane\u2024doe"
    assert [s.get("name") for s in root.iter("testsuite")] == ["jane.doe", "max"]
    assert cases[0].find("failure") is not None and cases[1].find("error") is not None
    assert (root.get("failures"), root.get("errors")) == ("1", "1")


NET, NO_NET = True, False  # a network namespace can be made here, or not
KNOWN, UNKNOWN = True, False  # a machine the seccomp filter knows (x86_64, aarch64), or not
FILES, SIGNALS, NETWORK, SOCKETS = "read and to write", "signal", "the network", "Unix sockets"
UDP = "the network by UDP"
MEMORY = "more memory than a check's cap"


@pytest.mark.parametrize(("platform", "abi", "sandboxed", "netns", "filtered", "reachable",
                          "why", "hint"), [
    ("linux", 7, True, NET, KNOWN, [], "", ""),
    ("linux", 6, True, NO_NET, KNOWN, [UDP], "no network namespace", "user namespaces"),
    ("linux", 7, True, NET, UNKNOWN, [SOCKETS], "x86_64 and aarch64 only", "SSH agent"),
    ("linux", 4, True, NO_NET, KNOWN, [SIGNALS, UDP], "Landlock is version 4", "6.12"),
    ("linux", 3, True, NET, KNOWN, [SIGNALS], "Landlock is version 3", "6.12"),
    ("linux", 3, True, NO_NET, KNOWN, [SIGNALS, NETWORK], "Landlock is version 3", "6.12"),
    ("linux", 0, True, NET, KNOWN, [FILES, SIGNALS], "has no Landlock", "6.12"),
    ("linux", 0, True, NO_NET, UNKNOWN, [FILES, SIGNALS, NETWORK, SOCKETS], "has no Landlock",
     "6.12"),
    ("linux", 7, False, NET, KNOWN, [FILES, SIGNALS, SOCKETS], "GRADTUTOR_SANDBOX=0", "6.12"),
    ("darwin", 0, True, NO_NET, UNKNOWN, [FILES, SIGNALS, NETWORK], "macOS has no", "6.12"),
    ("win32", 0, True, NO_NET, UNKNOWN, [FILES, SIGNALS, NETWORK], "Windows has no", "6.12"),
    ("linux-nomem", 7, True, NET, KNOWN, [MEMORY], "no memory cgroup", "delegated"),
    ("linux-nomem", 6, True, NO_NET, KNOWN, [UDP, MEMORY], "no network namespace", "user"),
])
def test_the_grading_warning_names_each_missing_wall_and_why(
    platform: str, abi: int, sandboxed: bool, netns: bool, filtered: bool,
    reachable: list[str], why: str, hint: str,
) -> None:
    memory_cgroup = not platform.endswith("-nomem")  # a Linux with no memory cgroup to make
    walls = grading.missing_walls(platform.removesuffix("-nomem"), abi, sandboxed, netns=netns,
                                  filtered=filtered, memory_cgroup=memory_cgroup)
    if not reachable:  # walled from everything: no warning at all
        assert walls is None
        return
    assert walls is not None and len(walls.reachable) == len(reachable)
    assert all(part in str(wall) for part, wall in zip(reachable, walls.reachable, strict=True))
    assert why in str(walls.why) and hint in str(walls.hint)


def test_the_walls_warning_comes_once_before_grading(tmp_path: Path, cli: Cli) -> None:
    """Where a wall is missing (here: the sandbox switched off), `grade` says so once, before
    the first check; where none is, it says nothing."""
    write(tmp_path / "class" / "amy" / "read-grad.py")
    for environ, warned in (({"GRADTUTOR_SANDBOX": "0"}, True), ({}, None)):
        code, _, err = cli("grade", str(tmp_path / "class"), "--exercise", "read-grad",
                           "--jobs", "1", environ={**os.environ, **environ})
        assert code in (0, 1), err
        if warned is None:  # as this machine is: warned only if it misses a wall
            from gradtutor.cli import missing_walls_here

            warned = missing_walls_here({}) is not None
        assert err.count("Warning: a student's code can reach") == int(warned), err
        if warned:
            assert err.index("Warning:") < err.index("Grading:"), err


# ---- the whole command ---------------------------------------------------------------------

def test_a_report_path_that_cannot_be_written_is_refused_before_grading(
    tmp_path: Path, cli: Cli,
) -> None:
    write(tmp_path / "class" / "amy" / "read-grad.py")
    for option, path in (("--csv", tmp_path / "nowhere" / "g.csv"),
                         ("--junit", tmp_path / "nowhere" / "g.xml"),
                         ("--csv", tmp_path)):
        code, out, err = cli("grade", str(tmp_path / "class"), "--exercise", "read-grad",
                                 option, str(path))
        assert code == 2 and out == "", err
        assert "cannot write a report to" in err and "nothing was graded yet" in err
        assert "Grading:" not in err  # refused before one check ran


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "601"])
def test_grade_and_check_refuse_the_same_timeouts(tmp_path: Path, cli: Cli, value: str) -> None:
    write(tmp_path / "class" / "amy" / "read-grad.py")
    for argv in (("grade", str(tmp_path / "class")), ("check", "read-grad")):
        code, _, err = cli(*argv, "--timeout", value)
        assert code == 2 and "--timeout must be from 0.1 to 600 seconds" in err, (argv, err)


@pytest.mark.slow
def test_a_class_of_zips_lms_files_and_hostile_names_is_graded_into_every_report(
    tmp_path: Path, cli: Cli,
) -> None:
    solution = load_course(rules=EXERCISE_RULES).exercises()["read-grad"].solution
    folder = _mkdir(tmp_path / "class")
    with zipfile.ZipFile(folder / "amy.zip", "w") as handed:
        handed.writestr("amy/read-grad.py", solution)
    write(folder / "smithjane_1001_5001_read-grad.py", solution)
    weird = os.fsdecode(b"=cmd\x1b]0;owned\x07\xff")
    write(folder / weird / "read-grad.py", "raise SystemExit(3)\n")
    code, out, err = cli("grade", str(folder), "--exercise", "read-grad", "--jobs", "1",
                             "--json", "--csv", str(tmp_path / "g.csv"), "--junit",
                             str(tmp_path / "g.xml"), "--seed", "4")
    assert code == 0, err
    report = json.loads(out)
    passed = {s["student"]: s["passed"] for s in report["students"]}
    shown = "=cmd\\x1b]0;owned\\x07\\xff"
    assert passed == {"amy": True, "smithjane": True, shown: False}
    assert "\x1b" not in err + out
    rows = list(csv.reader(io.StringIO((tmp_path / "g.csv").read_text(encoding="utf-8"))))
    assert sorted(row[0] for row in rows[1:]) == ["'" + shown, "amy", "smithjane"]
    suites = [s.get("name", "") for s in ET.parse(tmp_path / "g.xml").getroot().iter("testsuite")]
    assert sorted(suites) == sorted([shown, "amy", "smithjane"])


def test_grade_reports_the_class_when_one_zip_is_damaged(tmp_path: Path, cli: Cli) -> None:
    solution = load_course(rules=EXERCISE_RULES).exercises()["read-grad"].solution
    folder = _mkdir(tmp_path / "class")
    with zipfile.ZipFile(folder / "amy.zip", "w") as handed:
        handed.writestr("read-grad.py", solution)
    _damaged_zip(folder / "mallory.zip", zipfile.ZIP_LZMA)
    code, out, err = cli("grade", str(folder), "--exercise", "read-grad", "--jobs", "1",
                         "--json", "--csv", str(tmp_path / "g.csv"), "--seed", "4")
    assert code == 0, err
    students = {s["student"]: s for s in json.loads(out)["students"]}
    assert students["amy"]["passed"] is True and students["mallory"]["passed"] is False
    assert "cannot read mallory.zip" in json.dumps(students["mallory"])
    rows = list(csv.reader(io.StringIO((tmp_path / "g.csv").read_text(encoding="utf-8"))))
    assert sorted(row[0] for row in rows[1:]) == ["amy", "mallory"]


def test_a_zip_of_too_many_entries_is_its_student_s_problem_before_its_directory_is_read(
        tmp_path: Path) -> None:
    """The review's n21: 400,000 entries cost seconds and some 200 MB to list."""
    from gradtutor.submissions import MAX_ZIP_ENTRIES

    class_folder = _mkdir(tmp_path / "class")
    with zipfile.ZipFile(class_folder / "many.zip", "w") as handed:
        handed.writestr("read-grad.py", "x = 1\n")
        for i in range(MAX_ZIP_ENTRIES + 1):
            handed.writestr(f"f/{i}", "")
    with zipfile.ZipFile(class_folder / "amy.zip", "w") as handed:
        handed.writestr("read-grad.py", "fine\n")
    staged = {s.name: s for s in stage(find_submissions([class_folder], IDS), IDS,
                                       _mkdir(tmp_path / "root"))}
    assert staged["amy"].problem is None
    assert f"many.zip lists more than {MAX_ZIP_ENTRIES} entries" in str(staged["many"].problem)
