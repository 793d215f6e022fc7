"""Nothing outside a check's folder changes mode, owner, times or extended attributes
(seccomp.refuse_calls, a seccomp filter): Landlock has no right for these calls, and
a student who could `chmod 000` the next run's submissions or `chmod 644 ~/.ssh/id_rsa` would
change the next verdicts and the teacher's secrets. Tested as root and as an ordinary user."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from grading_support import make_class, run_cli

from gradtutor.runtime.seccomp import REFUSED

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.machine() not in REFUSED,
    reason="the filter is for Linux on x86_64 and aarch64")

# Tries each call on the file argv[1] (outside) and writes argv[2]/made.txt (its own folder);
# prints one word per call.
ATTEMPTS = '''
import os, sys
from gradtutor.runtime.seccomp import refuse_calls
if sys.argv[3] == "filter":
    assert refuse_calls()
outside = sys.argv[1]
fd = os.open(outside, os.O_RDONLY)
calls = {
    "chmod": lambda: os.chmod(outside, 0o777),
    "fchmod": lambda: os.fchmod(fd, 0o777),
    "utime": lambda: os.utime(outside, (1, 1)),
    "chown": lambda: os.chown(outside, os.getuid(), os.getgid()),
    "setxattr": lambda: os.setxattr(outside, "user.gradtutor", b"1"),
    "removexattr": lambda: os.removexattr(outside, "user.kept"),
}
for name, call in calls.items():
    try:
        call()
        print(name, "done")
    except PermissionError:
        print(name, "refused")
    except OSError as exc:  # a file system without user xattrs, say
        print(name, "unsupported", exc.errno)
with open(os.path.join(sys.argv[2], "made.txt"), "w") as f:
    f.write("a learner may still write its own files")
print("write done")
'''


def as_nobody() -> list[str]:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run as an ordinary user")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder in /tmp an ordinary user (65534) owns, with an outside file of theirs."""
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-test-meta-"))
    (folder / "own").mkdir()
    (folder / "outside.txt").write_text("keep me")
    with contextlib.suppress(OSError):
        os.setxattr(folder / "outside.txt", "user.kept", b"1")
    os.chmod(folder / "outside.txt", 0o600)
    if os.geteuid() == 0:
        for path in (folder, folder / "own", folder / "outside.txt"):
            os.chown(path, 65534, 65534)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def attempt(place: Path, prefix: list[str], mode: str) -> dict[str, str]:
    ran = subprocess.run([*prefix, sys.executable, "-c", ATTEMPTS, str(place / "outside.txt"),
                          str(place / "own"), mode], capture_output=True, text=True,
                         timeout=120, cwd="/")
    assert ran.returncode == 0, ran.stderr
    return dict(line.split(" ", 1) for line in ran.stdout.splitlines())


@pytest.mark.parametrize("user", ["root", "ordinary"])
def test_the_filter_refuses_every_metadata_change_and_leaves_writing(
        place: Path, user: str) -> None:
    prefix = as_nobody() if user == "ordinary" else []
    if user == "root" and os.geteuid() != 0:
        pytest.skip("not running as root")
    before = os.stat(place / "outside.txt")
    seen = attempt(place, prefix, "filter")
    assert {seen[c] for c in ("chmod", "fchmod", "utime", "chown")} == {"refused"}
    assert seen["setxattr"] != "done" and seen["removexattr"] != "done"
    assert seen["write"] == "done" and (place / "own" / "made.txt").exists()
    after = os.stat(place / "outside.txt")
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    unfiltered = attempt(place, prefix, "none")  # the same calls succeed without the filter
    assert {unfiltered[c] for c in ("chmod", "fchmod", "utime", "chown")} == {"done"}


def test_a_student_cannot_chmod_or_touch_another_students_file(tmp_path: Path) -> None:
    students = make_class(tmp_path / "class")
    alice = students["alice"] / "read-grad.py"
    attack = (f"import os\nfor call in (lambda: os.chmod({str(alice)!r}, 0),\n"
              f"             lambda: os.utime({str(alice)!r}, (0, 0))):\n"
              "    try:\n        call()\n        print('CHANGED')\n"
              "    except PermissionError:\n        print('REFUSED')\n")
    (tmp_path / "class" / "mallory").mkdir()
    (tmp_path / "class" / "mallory" / "read-grad.py").write_text(attack + alice.read_text())
    before = os.stat(alice)
    code, out, err = run_cli("grade", str(tmp_path / "class"), "--exercise=read-grad",
                             "--jobs", "2", "--seed", "5", "--json", home=tmp_path / "home")
    assert code == 0, err
    report = {s["student"]: s["exercises"][0] for s in json.loads(out)["students"]}
    assert report["mallory"]["output"].split() == ["REFUSED", "REFUSED"]
    after = os.stat(alice)
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert report["alice"]["status"] == "pass"
