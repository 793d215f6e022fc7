"""Read walls that do not depend on where things are (`grade`, sandbox.readable_roots): with
the class under /opt, inside the venv, in a source checkout on PYTHONPATH, or the run's copies
in TMPDIR=/dev/shm, a student's code reads neither another student's file nor the run's
copies; and a class inside a folder every student may read is refused before grading."""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from grading_support import make_class, run_cli

from gradtutor.runtime.sandbox import landlock_abi, readable_roots

pytestmark = pytest.mark.skipif(landlock_abi() < 1, reason="read walls need Landlock")

CHECKOUT = Path(__file__).resolve().parent.parent  # gradtutor's source checkout

# Looks for alice's file where it was handed in, and for the run's copies above its own.
SNOOP = '''
import os
from pathlib import Path
run = Path(__file__).resolve().parent.parent
for what, read in (("ALICE", lambda: open(ALICE).read()),
                   ("RUN", lambda: os.listdir(run))):
    try:
        read()
        print(what, "read")
    except OSError:
        print(what, "denied")
mine = Path(__file__).resolve()
print("COPIES", len([p for p in run.glob("*/*.py") if p.resolve() != mine]))
'''


@pytest.fixture
def place(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A folder for the class in the layout asked for, removed afterwards."""
    parent = {"opt": Path("/opt"), "venv": Path(sys.prefix), "checkout": CHECKOUT,
              "shm": None}[request.param]
    if parent is not None and not os.access(parent, os.W_OK):
        pytest.skip(f"cannot write in {parent}")
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-test-walls-", dir=parent))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("place", ["opt", "venv", "checkout", "shm"], indirect=True)
def test_no_student_reads_another_wherever_the_class_is(
        place: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = request.node.callspec.params["place"]
    students = make_class(place / "class")
    for name in ("bob", "carol", "dave"):
        shutil.rmtree(students[name])
    alice = students["alice"] / "read-grad.py"
    (place / "class" / "eve").mkdir()
    (place / "class" / "eve" / "read-grad.py").write_text(
        f"ALICE = {str(alice)!r}\n" + SNOOP + alice.read_text())
    environ = {"PYTHONPATH": str(CHECKOUT)} if layout == "checkout" else {}
    if layout == "shm":
        if not os.access("/dev/shm", os.W_OK):
            pytest.skip("no /dev/shm")
        environ["TMPDIR"] = "/dev/shm"
        monkeypatch.setattr(tempfile, "tempdir", "/dev/shm")
    code, out, err = run_cli("grade", str(place / "class"), "--exercise=read-grad",
                             "--jobs", "2", "--seed", "9", "--json", home=place / "home",
                             environ=environ)
    assert code == 0, err
    report = {s["student"]: s["exercises"][0] for s in json.loads(out)["students"]}
    assert report["eve"]["output"].split() == ["ALICE", "denied", "RUN", "denied",
                                               "COPIES", "0"]
    assert report["alice"]["status"] == report["eve"]["status"] == "pass"


def test_the_readable_roots_are_the_librarys_not_a_prefix_or_a_checkout() -> None:
    roots = readable_roots()
    assert sys.prefix not in roots and "/opt" not in roots and "/dev" not in roots
    assert str(CHECKOUT) not in roots
    assert str((CHECKOUT / "gradtutor").resolve()) in roots


def test_a_class_inside_a_readable_folder_is_refused_before_grading(tmp_path: Path) -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    if not os.access(site, os.W_OK):
        pytest.skip(f"cannot write in {site}")
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-test-walls-", dir=site))
    try:
        make_class(folder / "class")
        code, out, err = run_cli("grade", str(folder / "class"), "--exercise=read-grad",
                                 home=tmp_path / "home")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert code == 2 and out == ""
    assert "which every student's code may read" in err and "Traceback" not in err


def test_a_private_course_inside_a_readable_folder_is_refused_before_grading(
        tmp_path: Path) -> None:
    """The review's n29: a course given to --lessons from torch's site-packages (or
    /usr/local) was read by every student, solutions and all; now grading refuses to start."""
    site = Path(sysconfig.get_paths()["purelib"])
    if not os.access(site, os.W_OK):
        pytest.skip(f"cannot write in {site}")
    make_class(tmp_path / "class")
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-test-course-", dir=site))
    try:
        shutil.copytree(CHECKOUT / "lessons", folder / "course")
        code, out, err = run_cli("grade", str(tmp_path / "class"), "--exercise=read-grad",
                                 "--lessons", str(folder / "course"), home=tmp_path / "home")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert code == 2 and out == "", err
    assert f"the course in {folder / 'course'} is inside" in err and "Traceback" not in err
