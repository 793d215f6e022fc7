"""Shared fixtures: a fixture course, and an Environment whose streams are strings."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradtutor.env import Environment

FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"


def pytest_configure(config: pytest.Config) -> None:
    # Nothing a test does (progress, the lesson cache) may touch the developer's own folders.
    # Under pytest-xdist each worker runs this too, and so has a folder of its own.
    os.environ["GRADTUTOR_HOME"] = tempfile.mkdtemp(prefix="gradtutor-tests-")


# Modules whose tests share a module fixture that costs a lot (hundreds of checks, a fork
# server, a graded class): each runs whole in one pytest-xdist worker, in its order, so the
# fixture is paid for once. Every other test runs in whichever worker is free.
WHOLE_MODULES = frozenset(f"tests/{name}.py" for name in (
    "test_checkers_basic", "test_checkers_loops",  # results: the checker batches
    "test_forgery",  # results: the forgery driver's run
    "test_isolation",  # runs: its hostile files (tests/hostile_cases.py), cold; guarded: watched
    "test_warm", "test_snippets",  # warm: a fork server
    "test_grade",  # graded: a class graded once
    "test_doctor_corpus",  # judged: every corpus script run under the probe once
    "test_mutant_seeds",  # default, swept: every mutant of every exercise on 50 seeds
))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n 2` (pyproject.toml's addopts): xdist's load scheduling, but with each module of
    WHOLE_MODULES one unit of work. (xdist's own `--dist loadgroup` groups marked tests by
    renaming them, which pytest 9.2 ignores: it takes node ids from elsewhere, and the groups
    were silently split.) The largest units are handed out first, so the long ones start at
    once; single tests follow, one at a time, to whichever worker is nearly idle."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in WHOLE_MODULES else nodeid

    return Scheduling(config, log)


class Cli:
    """Runs the real CLI in-process with captured streams and its own GRADTUTOR_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def __call__(self, *argv: str, stdin: str = "", tty: bool = False, width: int = 80,
                 environ: dict[str, str] | None = None) -> tuple[int, str, str]:
        from gradtutor.cli import run

        out, err = io.StringIO(), io.StringIO()
        env = Environment(
            stdin=io.StringIO(stdin), stdout=out, stderr=err,
            environ={"GRADTUTOR_HOME": str(self.home), **(environ or {})},
            stdin_tty=tty, stdout_tty=False, width=width,
        )
        code = run(list(argv), env)
        return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home")


@pytest.fixture
def course_dir() -> Path:
    return FIXTURE_COURSE


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Makes a hang (say, a named pipe opened with no writer) fail the test after a minute
    instead of stalling the suite. Not a timing assertion: nothing here is near a minute."""
    import signal

    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("hung: blocked for a minute")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """What learner code must not change (isolation_support.Guarded), with HOME in it."""
    from isolation_support import CONFINED, HOSTILE, Guarded, cold, exercise

    from gradtutor.runtime.run import run_check

    if not CONFINED:
        pytest.skip("needs Landlock with signal scoping")
    # warm the tutor's own imports first, so that what they write is in the snapshot
    run_check(exercise(), HOSTILE / "correct_prints_passed.py", seed=1, engine=cold())
    Cli(Path(os.environ["GRADTUTOR_HOME"]))("list")  # and the tutor's lesson cache
    with pytest.MonkeyPatch.context() as mp:
        guard = Guarded(tmp_path_factory.mktemp("guarded"))
        mp.setenv("HOME", str(guard.home))
        yield guard
