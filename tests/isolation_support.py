"""What the isolation tests (test_isolation, test_warm, test_forgery, test_lifetime) share:
the course's read-grad, the hostile files' folder, processes read from /proc independently of
the tutor, what learner code must not change (`Guarded`), worker runs built by hand for the
pure decisions, and a fake Windows job. The `guarded` fixture is conftest.py's."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import gradtutor
from gradtutor.checking.check import MEMORY_BUDGET, RESULTS_CAP
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.outcome import Judge, WorkerRun, decide
from gradtutor.checking.protocol import Expected
from gradtutor.checking.verdict import Check, Verdict
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.lifetime import remove_tree
from gradtutor.runtime.sandbox import WRITABLE_ENV, landlock_abi, sandbox_enabled

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(gradtutor.__file__).parents[1]  # the gradtutor under test
LINUX = sys.platform.startswith("linux")
POSIX = os.name == "posix"

CORRECT = "def read_grad(w, loss_fn):\n    loss_fn(w).backward()\n    return w.grad\n"


def cold() -> ColdEngine:
    """A cold engine on this test process's environment as it is now (a test may have set a
    variable its worker is to get): the environment is always handed to the runtime."""
    return ColdEngine(environ=dict(os.environ))


def exercise(timeout: float = 3.0) -> Exercise:
    """The course's read-grad, judged as the lesson declares it, with this time limit."""
    step = load_course(rules=EXERCISE_RULES).find_exercise("read-grad")
    assert isinstance(step, Exercise)
    return dataclasses.replace(step, timeout=timeout)


def live(pids: list[int]) -> tuple[int, ...]:
    """The pids that still name a process (a zombie counts: nobody has reaped it)."""
    if LINUX:
        return tuple(pid for pid in pids if os.path.exists(f"/proc/{pid}"))
    return tuple(pid for pid in pids if POSIX and _exists(pid))


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_parents() -> dict[int, int]:
    """Every process's parent, read from /proc independently of the runner."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        try:
            data = Path(f"/proc/{name}/stat").read_bytes() if name.isdigit() else b""
        except OSError:
            continue
        if data:
            parents[int(name)] = int(data[data.rfind(b")") + 2:].split()[1])
    return parents


def own_descendants() -> set[int]:
    """Processes below this test process, read from /proc independently of the runner."""
    parents = process_parents()
    found, todo = set(), [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def processes_named(pids: set[int]) -> list[str]:
    """Each process as a failed test should name it: pid, parent, state and command line."""
    said = []
    for pid in sorted(pids):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            said.append(f"{pid}: gone")
            continue
        state, parent = stat[stat.rfind(b")") + 2:].split()[:2]
        said.append(f"{pid} (parent {int(parent)}, {state.decode()}): "
                    f"{command.decode(errors='replace')[:300]}")
    return said


CONFINED = landlock_abi() >= 6 and sandbox_enabled(os.environ)
needs_walls = pytest.mark.skipif(not CONFINED, reason="needs Landlock with signal scoping")
TAMPERING = ("tampers_package", "rewrites_progress", "deletes_home")
SIGNALLING = [  # (file, status, words in its verdict): each call is refused, the tutor goes on
    ("kills_parent", "error", "PermissionError"),
    ("stops_parent", "error", "PermissionError"),
    ("kills_parent_group", "error", "PermissionError"),
    ("kills_every_process", "fail", ""),
]


class Guarded:
    """What learner code must not change, with a copy to compare against: the tutor's package
    and lessons, the progress file, a home folder and other submissions. `changes()` lists what
    differs now and puts it back (a test that fails must not leave the source tree broken)."""

    def __init__(self, root: Path) -> None:
        from gradtutor.lessons.course import default_lessons_dir

        self.home = root / "home"
        self.submissions = root / "submissions"
        self.data = Path(os.environ["GRADTUTOR_HOME"])  # the tests' own (conftest.py)
        for folder in (self.home, self.submissions, self.data):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / "thesis.txt").write_text("years of work\n")
        (self.submissions / "other_student.py").write_text(CORRECT)
        (self.data / "progress.json").write_text(json.dumps(
            {"version": 1, "lessons": {"grad": {"step": 2}}}))
        for name in TAMPERING:
            (self.submissions / f"{name}.py").write_bytes((HOSTILE / f"{name}.py").read_bytes())
        package = Path(gradtutor.__file__).parent
        self.roots = (package, default_lessons_dir(), self.data, self.home, self.submissions)
        self.saved = self.snapshot()

    def snapshot(self) -> dict[Path, bytes | None]:
        import importlib.util

        files: dict[Path, bytes | None] = {}
        for root in self.roots:
            for path in root.rglob("*"):
                content = path.read_bytes() if path.is_file() else None
                if (content is not None and path.suffix == ".pyc"
                        and content.startswith(importlib.util.MAGIC_NUMBER)):
                    continue  # Python's own, which the tutor's imports may write; not planted
                if path.name == "__pycache__":
                    continue  # made by the tutor's own imports too; what is in it counts
                files[path] = content
        return files

    def changes(self) -> list[str]:
        now = self.snapshot()
        changed = sorted(str(p) for p in now.keys() | self.saved.keys()
                         if now.get(p, b"?") != self.saved.get(p, b"?"))
        for path in now.keys() - self.saved.keys():
            with contextlib.suppress(OSError):
                path.unlink() if not path.is_dir() else remove_tree(path)
        for path, content in self.saved.items():
            if content is not None and now.get(path) != content:
                path.write_bytes(content)
        return changed


def refused_everything(verdict: Verdict) -> None:
    """The file's own report: every attempt was refused, none done."""
    assert "refused" in verdict.output, verdict.output
    assert not re.search(r"\b(done|deleted|planted in)\b", verdict.output), verdict.output


EXPECTED: Expected = {"type": "expected", "cases": [{"w": [1.0]}, {"w": [2.0]}],
            "expected": [{"grad": [2.0]}, {"grad": [4.0]}]}


def line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def worker_run(*messages: Mapping[str, Any], raw: bytes = b"", returncode: int | None = 0,
               **more: Any) -> WorkerRun:
    data = b"".join(line(m) for m in messages) + raw
    fields = {"results_overflow": False, "timed_out": False, "startup_timed_out": False,
              "memory_limit": MEMORY_BUDGET, "file_limit": 64 << 20, **more}
    return WorkerRun(data, returncode=returncode, **fields)


def error(kind: str, message: str = "", traceback: str = "") -> dict[str, str]:
    return {"type": kind, "message": message, "traceback": traceback}


def judge_all_pass(cases: list[Any], expected: list[Any], observed: list[Any]) -> list[Check]:
    assert all(isinstance(o, dict) for o in observed)  # plain data only
    return [Check("values", "pass", f"{len(observed)} of {len(cases)} right")]


def decided(run: WorkerRun, judge: Judge = judge_all_pass) -> tuple[Check, ...]:
    return decide(run, judge, function="read_grad", timeout=10, startup_allowance=120,
                  results_cap=RESULTS_CAP)


class FakeJob:
    """Records what the runner asks of a worker's job (`runner.Tree`); `refuse` makes the
    memory cap fail as a Windows call would."""

    def __init__(self, pid: int, refuse: bool = False) -> None:
        self.pid = pid
        self.refuse = refuse
        self.calls: list[str] = []

    def cap_memory_above_now(self, budget: int) -> None:
        self.calls.append(f"cap {budget}")
        if self.refuse:
            raise OSError(5, "access denied")

    def kill(self) -> None:
        self.calls.append("kill")

    def close(self) -> None:
        self.calls.append("close")


class FakeJobs:
    """A `runner.Contain` that puts each worker in a FakeJob and keeps them."""

    def __init__(self) -> None:
        self.jobs: list[FakeJob] = []

    def __call__(self, proc: Any) -> FakeJob:
        self.jobs.append(FakeJob(proc.pid))
        return self.jobs[-1]


# A file whose code notes its pid (in GRADTUTOR_TEST_PIDDIR) as soon as it is loaded, then
# never returns: once the note is there, learner code is running.
LOOPS = """
import os
with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "loops.pid"), "w") as f:
    f.write(str(os.getpid()))


def read_grad(w, loss_fn):
    while True:
        pass
"""


def wait_for(path: Path, seconds: float = 60.0) -> None:
    """Until `path` exists; a generous deadline, since a loaded machine may take long."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear in {seconds:g} s"
        time.sleep(0.01)


def loops_noting(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """LOOPS written into `folder`, and where it will note its pid: GRADTUTOR_TEST_PIDDIR
    (writable for learner code) is set for the workers started from now on."""
    notes = folder / "notes"
    notes.mkdir()
    monkeypatch.setenv("GRADTUTOR_TEST_PIDDIR", str(notes))
    monkeypatch.setenv(WRITABLE_ENV, str(notes))
    (folder / "loops.py").write_text(LOOPS)
    return folder / "loops.py", notes / "loops.pid"
