"""Shared fixtures: a fixture course, and an Environment whose streams are strings."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradtutor.env import Environment

FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"


def pytest_configure(config: pytest.Config) -> None:
    # Nothing a test does (progress, the lesson cache) may touch the developer's own folders.
    os.environ["GRADTUTOR_HOME"] = tempfile.mkdtemp(prefix="gradtutor-tests-")


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
