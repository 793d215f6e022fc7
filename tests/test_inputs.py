"""Odd inputs end in one clear line, never a hang or an internal error: option values, closed
and full streams, a data folder the learner cannot read."""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradtutor.cli import run
from gradtutor.env import Environment

FIXTURES = Path(__file__).parent / "fixtures" / "course"
COURSE = ["--lessons", str(FIXTURES)]
ROOT = Path(__file__).resolve().parents[1]


def one_error_line(err: str) -> str:
    """The single line a refused input gives, checked to be one clear line."""
    assert err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err
    assert err.startswith("gradtutor: error: ") and "(hint: " in err
    return err


# --- option values ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e308", "601"])
def test_timeout_must_be_a_finite_number_of_seconds_in_range(cli, value):
    code, out, err = cli("check", "read-grad", "--timeout", value, *COURSE)
    assert code == 2 and out == ""
    assert "--timeout must be from 0.1 to 600 seconds" in one_error_line(err)


@pytest.mark.parametrize("value", ["²", "١", "-1", "0", "1e3", "", " ", "9" * 5000, "6"])
def test_an_odd_step_is_one_clear_line(cli, value):
    code, out, err = cli("show", "basics", "--step", value, *COURSE)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert len(line) < 300  # a 5000-digit number is not echoed whole


def test_a_step_number_with_leading_zeros_is_still_that_step(cli):
    code, out, _ = cli("show", "basics", "--step", "0002", *COURSE)
    assert code == 0
    assert out == cli("show", "basics", "--step", "2", *COURSE)[1]


def test_a_huge_seed_is_refused_without_echoing_it_whole(cli):
    code, _, err = cli("check", "read-grad", "--seed", "9" * 5000, *COURSE)
    assert code == 2
    assert len(one_error_line(err)) < 300


# --- streams ----------------------------------------------------------------------------------

class Failing(io.StringIO):
    def __init__(self, code: int) -> None:
        super().__init__()
        self.code = code

    def write(self, text: str) -> int:
        raise OSError(self.code, os.strerror(self.code))


def run_with(stdout: io.StringIO, stderr: io.StringIO, *argv: str) -> int:
    env = Environment(stdin=io.StringIO(), stdout=stdout, stderr=stderr, environ={},
                      stdin_tty=False, stdout_tty=False, width=80)
    return run(list(argv), env)


def test_a_full_disk_as_stdout_is_one_line_on_stderr():
    err = io.StringIO()
    assert run_with(Failing(errno.ENOSPC), err, "list", *COURSE) == 74
    assert "cannot write the output (No space left on device)" in one_error_line(err.getvalue())


def test_a_broken_pipe_ends_quietly_as_a_shell_reports_it():
    err = io.StringIO()
    assert run_with(Failing(errno.EPIPE), err, "list", *COURSE) == 141
    assert err.getvalue() == ""


def test_with_stderr_gone_too_only_the_exit_code_says_it():
    assert run_with(Failing(errno.ENOSPC), Failing(errno.ENOSPC), "list", *COURSE) == 74


def gradtutor(*args: str, home: Path, close: tuple[int, ...] = (), timeout: float = 60,
              **kwargs: object) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process, with the descriptors in `close` closed before it
    starts (as the shell's `0<&-` or `>&-` does)."""
    env = {**os.environ, "GRADTUTOR_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("GRADTUTOR_DEBUG", None)
    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "gradtutor", *args], env=env, text=True,
                          preexec_fn=closing, timeout=timeout, **kwargs)  # type: ignore[call-overload]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_dev_full_as_stdout_of_the_real_cli(tmp_path):
    with open("/dev/full", "w") as full:
        done = gradtutor("list", *COURSE, home=tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 74
    assert "cannot write the output" in one_error_line(done.stderr)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
def test_a_closed_stdout_of_the_real_cli(tmp_path):
    done = gradtutor("list", *COURSE, home=tmp_path, close=(1,), stderr=subprocess.PIPE)
    assert done.returncode == 74
    assert "cannot write the output" in one_error_line(done.stderr)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
def test_a_broken_pipe_of_the_real_cli_leaves_no_traceback(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradtutor", "show", "basics", *COURSE],
        env={**os.environ, "GRADTUTOR_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    with proc.stderr:
        assert proc.wait(timeout=60) == 141
        assert proc.stderr.read() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
def test_a_closed_stdin_quits_the_walkthrough_at_once(tmp_path):
    done = gradtutor("start", "basics", *COURSE, home=tmp_path, close=(0,),
                     capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "Your place is saved at step 1 of" in done.stdout


# --- the data folder --------------------------------------------------------------------------

def as_another_user() -> list[str]:
    """A prefix that runs a command as a user without root's power over permissions."""
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and no setpriv to drop it")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("command", [["list"], ["progress"], ["start", "basics"],
                                     ["check", "square-grad"]])
def test_an_unreadable_data_folder_is_one_clear_line(tmp_path, command):
    prefix = as_another_user()
    tmp_path.chmod(0o755)
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "progress.json").write_text('{"version": 1, "lessons": {}}')
    (home / "workspace" / "square-grad.py").write_text("def f():\n    pass\n")
    home.chmod(0o000)
    try:
        env = {**os.environ, "GRADTUTOR_HOME": str(home), "PYTHONPATH": str(ROOT)}
        env.pop("GRADTUTOR_DEBUG", None)
        done = subprocess.run([*prefix, sys.executable, "-m", "gradtutor", *command, *COURSE],
                              env=env, text=True, capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=60, cwd=tmp_path)
    finally:
        home.chmod(0o755)
    assert done.returncode == 2
    line = one_error_line(done.stderr)
    assert f"permission denied: {home}" in line
    assert f"gradtutor keeps your progress in {home}" in line
    assert list(home.glob("*.bak.json")) == []  # nothing was set aside
