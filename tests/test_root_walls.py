"""Learner code holds no privilege, whatever user the grader runs as (issue 35): run as the
teacher runs it, `gradtutor grade` and `gradtutor check` as root with root's capabilities (not
dropped before, as CI containers and lab machines run), and as an ordinary user, a student's
file finds CapEff 0, the machine's calls refused (reboot, sethostname, the kernel log, bpf,
perf_event_open, fanotify, setns, mknod, chattr's ioctl, an inotify watch, realtime priority,
a vsock or packet socket), and no process's /proc/PID/environ readable: the teacher's token
is in no report.
"""

from __future__ import annotations

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

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.machine() != "x86_64",
    reason="the probe uses x86_64's system call numbers")]

SECRET = "ghp_GRADTUTOR_TEST_TEACHER_SECRET_5f2c"

# A student's read-grad.py: tries each call, prints what happened as one PROBE line, then is
# the right answer (so a pass says nothing of the walls). "refused" is EPERM or EACCES.
PROBE = '''
import ctypes, errno, fcntl, json, os, socket, struct

def _try(call):
    try:
        call()
    except OSError as exc:
        return "refused" if exc.errno in (errno.EPERM, errno.EACCES) else f"errno {exc.errno}"
    return "done"

_libc = ctypes.CDLL(None, use_errno=True)

def _sys(nr, *args):
    def call():
        if _libc.syscall(nr, *args) == -1:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
    return call

def probe():
    found = {}
    with open("/proc/thread-self/status") as status:
        found["CapEff"] = next(l.split()[1] for l in status if l.startswith("CapEff"))
    found["sethostname"] = _try(lambda: socket.sethostname(socket.gethostname()))
    found["reboot"] = _try(_sys(169, 0, 0, 0, 0))  # a bad magic: EINVAL were it allowed
    found["syslog"] = _try(_sys(103, 10, 0, 0))  # the kernel log's size
    found["bpf"] = _try(_sys(321, 5, 0, 0))
    found["perf_event_open"] = _try(_sys(298, 0, 0, -1, -1, 0))
    found["fanotify_init"] = _try(_sys(300, 0, 0))
    found["setns"] = _try(_sys(308, -1, 0))
    found["vsock"] = _try(lambda: socket.socket(40, socket.SOCK_STREAM).close())
    found["packet"] = _try(lambda: socket.socket(17, socket.SOCK_RAW).close())
    found["mknod"] = _try(lambda: os.mknod("node", 0o600 | 0o020000, os.makedev(1, 3)))
    with open("own.txt", "w") as own:
        found["setflags"] = _try(
            lambda: fcntl.ioctl(own.fileno(), 0x40086602, struct.pack("i", 0)))
    inotify = _libc.inotify_init1(0)
    found["inotify_add_watch"] = _try(_sys(254, inotify, b"/tmp", 0xFFF))
    found["sched_fifo"] = _try(
        lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)))
    readable = secrets = 0
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            readable += 1
            secrets += SECRET.encode() in data
    found["environ_readable"], found["secrets"] = readable, secrets
    return found

print("PROBE " + json.dumps(probe()))
'''
CALLS = ("sethostname", "reboot", "syslog", "bpf", "perf_event_open", "fanotify_init", "setns",
         "vsock", "packet", "mknod", "setflags", "inotify_add_watch", "sched_fifo")


def student_file() -> str:
    solution = load_course(rules=EXERCISE_RULES).exercises()["read-grad"].solution
    return f"SECRET = {SECRET[:-4]!r} + {SECRET[-4:]!r}\n" + PROBE + solution


def probed(text: str) -> dict[str, object]:
    line = next(line for line in text.splitlines() if "PROBE {" in line)
    found: dict[str, object] = json.loads(line[line.index("{"):])
    return found


def assert_walled(found: dict[str, object]) -> None:
    assert found["CapEff"] == "0000000000000000"
    assert {call: found[call] for call in CALLS} == dict.fromkeys(CALLS, "refused")
    assert found["environ_readable"] == 0 and found["secrets"] == 0


def gradtutor(*argv: str, home: Path, user: list[str] | None = None,
              path: str = "") -> tuple[str, str]:
    """The CLI in a process of its own, the teacher's secret in its environment from the
    start (what /proc/PID/environ shows); `user`: a prefix and interpreter to run it with."""
    environ = {**os.environ, "GRADTUTOR_HOME": str(home), "TMPDIR": str(home),
               "GRADTUTOR_TEACHER_TOKEN": SECRET, "HOME": str(home)}
    if path:
        environ["PYTHONPATH"] = path
    done = subprocess.run([*(user or [sys.executable]), "-m", "gradtutor", *argv],
                          env=environ, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, cwd="/")
    assert SECRET not in done.stdout + done.stderr
    return done.stdout, done.stderr


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder in /tmp that an ordinary user (65534) may use when the tests run as root."""
    folder = Path(tempfile.mkdtemp(prefix="gradtutor-test-root-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_as_root_a_graded_student_s_file_holds_no_capability_and_reads_no_secret(
        place: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("not running as root")
    for student in ("alice", "mallory"):
        (place / "class" / student).mkdir(parents=True)
    solution = load_course(rules=EXERCISE_RULES).exercises()["read-grad"].solution
    (place / "class" / "alice" / "read-grad.py").write_text(solution, encoding="utf-8")
    (place / "class" / "mallory" / "read-grad.py").write_text(student_file(), encoding="utf-8")
    reports = place / "reports"
    reports.mkdir()
    out, err = gradtutor("grade", str(place / "class"), "--exercise", "read-grad", "--jobs", "2",
                         "--seed", "3", "--json", "--junit", str(reports / "class.xml"),
                         home=place / "home")
    students = {s["student"]: s["exercises"][0] for s in json.loads(out)["students"]}
    assert students["alice"]["status"] == students["mallory"]["status"] == "pass", err
    assert_walled(probed(students["mallory"]["output"]))
    assert SECRET not in (reports / "class.xml").read_text(encoding="utf-8")


def test_as_root_a_learner_s_own_check_holds_no_capability(place: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("not running as root")
    (place / "read-grad.py").write_text(student_file(), encoding="utf-8")
    out, err = gradtutor("check", "read-grad", str(place / "read-grad.py"), "--json",
                         home=place / "home")
    report = json.loads(out)
    assert report["passed"] is True, err
    assert_walled(probed(report["output"]))


def ordinary_user() -> tuple[list[str], str, str]:
    """How root runs gradtutor as uid 65534 here: setpriv, an interpreter that user can run
    (this venv's may live under /root), and a PYTHONPATH holding gradtutor and its packages."""
    import torch

    import gradtutor

    setpriv = shutil.which("setpriv")
    python = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}",
                          path="/usr/local/bin:/usr/bin:/bin")
    if setpriv is None or python is None:
        pytest.skip("needs setpriv and a system Python of this version to run as a user")
    user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all"]
    path = os.pathsep.join([str(Path(gradtutor.__file__).parent.parent),
                            str(Path(torch.__file__).parent.parent)])
    tried = subprocess.run([*user, python, "-c", "import torch, typer, gradtutor"],
                           env={**os.environ, "PYTHONPATH": path}, capture_output=True,
                           timeout=120, cwd="/")
    if tried.returncode != 0:
        pytest.skip("uid 65534 cannot import this checkout and its packages here")
    return user, python, path


def test_as_an_ordinary_user_the_same_calls_are_refused(place: Path) -> None:
    """Run by root, the check runs as uid 65534 (setpriv); run by anyone else, as them."""
    user, python, path = ordinary_user() if os.geteuid() == 0 else ([], sys.executable, "")
    if os.geteuid() == 0:
        os.chown(place, 65534, -1)
    (place / "read-grad.py").write_text(student_file(), encoding="utf-8")
    out, err = gradtutor("check", "read-grad", str(place / "read-grad.py"), "--json",
                         home=place / "home", user=[*user, python], path=path)
    report = json.loads(out)
    assert report["passed"] is True, err
    assert_walled(probed(report["output"]))
