"""Odd inputs end in one clear line, never a hang or an internal error: option values, closed
and full streams, a data folder the learner cannot read."""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest
from waits import PATIENCE_S

from gradtutor.checking.lesson_proofs import SEEDS
from gradtutor.cli import run
from gradtutor.env import Environment
from gradtutor.runtime.sandbox import WRITABLE_ENV

if TYPE_CHECKING:
    from conftest import Cli

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
def test_timeout_must_be_a_finite_number_of_seconds_in_range(cli: Cli, value: str) -> None:
    code, out, err = cli("check", "read-grad", "--timeout", value, *COURSE)
    assert code == 2 and out == ""
    assert "--timeout must be from 0.1 to 600 seconds" in one_error_line(err)


@pytest.mark.parametrize("value", ["²", "١", "-1", "0", "1e3", "", " ", "9" * 5000, "6"])
def test_an_odd_step_is_one_clear_line(cli: Cli, value: str) -> None:
    code, out, err = cli("show", "basics", "--step", value, *COURSE)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert len(line) < 300  # a 5000-digit number is not echoed whole


def test_a_step_number_with_leading_zeros_is_still_that_step(cli: Cli) -> None:
    code, out, _ = cli("show", "basics", "--step", "0002", *COURSE)
    assert code == 0
    assert out == cli("show", "basics", "--step", "2", *COURSE)[1]


def test_a_huge_seed_is_refused_without_echoing_it_whole(cli: Cli) -> None:
    code, _, err = cli("check", "read-grad", "--seed", "9" * 5000, *COURSE)
    assert code == 2
    assert len(one_error_line(err)) < 300


def test_a_device_as_the_file_to_check_is_named_as_such(cli: Cli) -> None:
    code, _, err = cli("check", "square-grad", os.devnull, *COURSE)
    assert code == 2
    assert f"{os.devnull} is not a regular file" in one_error_line(err)


def test_a_data_folder_that_is_a_file_is_one_clear_line(cli: Cli, tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    for command in (["list"], ["start", "basics"], ["progress"]):
        code, _, err = cli(*command, *COURSE, environ={"GRADTUTOR_HOME": str(home)})
        assert code == 2
        assert f"your data folder {home} is not a folder" in one_error_line(err)


def test_escapes_typed_in_an_id_are_not_echoed_raw(cli: Cli) -> None:
    code, _, err = cli("show", "\x1b]0;pwned\x07", *COURSE)
    assert code == 2
    assert "no lesson '\\x1b]0;pwned\\x07'" in one_error_line(err)
    assert "\x1b" not in err and "\x07" not in err


@pytest.mark.parametrize("columns", ["0", "-5", "１２", "abc", "9" * 5000])
def test_a_senseless_columns_is_as_if_unset(tmp_path: Path, columns: str) -> None:
    env = {**os.environ, "GRADTUTOR_HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "COLUMNS": columns, "LINES": columns}
    for args in (["list", *COURSE], ["list", "--help"]):
        done = subprocess.run([sys.executable, "-m", "gradtutor", *args], env=env, text=True,
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    assert "Gradient basics" in subprocess.run(
        [sys.executable, "-m", "gradtutor", "list", *COURSE], env=env, text=True,
        capture_output=True, timeout=60).stdout  # not squeezed into 20 columns


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


def test_a_full_disk_as_stdout_is_one_line_on_stderr() -> None:
    err = io.StringIO()
    assert run_with(Failing(errno.ENOSPC), err, "list", *COURSE) == 74
    assert "cannot write the output (No space left on device)" in one_error_line(err.getvalue())


def test_a_broken_pipe_ends_quietly_as_a_shell_reports_it() -> None:
    err = io.StringIO()
    assert run_with(Failing(errno.EPIPE), err, "list", *COURSE) == 141
    assert err.getvalue() == ""


def test_with_stderr_gone_too_only_the_exit_code_says_it() -> None:
    assert run_with(Failing(errno.ENOSPC), Failing(errno.ENOSPC), "list", *COURSE) == 74


def gradtutor(*args: str, home: Path, close: tuple[int, ...] = (), timeout: float = 60,
              stdin: int | IO[Any] | None = None, stdout: int | IO[Any] | None = None,
              stderr: int | IO[Any] | None = None,
              capture_output: bool = False) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process, with the descriptors in `close` closed before it
    starts (as the shell's `0<&-` or `>&-` does)."""
    env = {**os.environ, "GRADTUTOR_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("GRADTUTOR_DEBUG", None)
    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "gradtutor", *args], env=env, text=True,
                          preexec_fn=closing, timeout=timeout, stdin=stdin, stdout=stdout,
                          stderr=stderr, capture_output=capture_output)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_dev_full_as_stdout_of_the_real_cli(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = gradtutor("list", *COURSE, home=tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 74
    assert "cannot write the output" in one_error_line(done.stderr)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
def test_a_closed_stdout_of_the_real_cli(tmp_path: Path) -> None:
    done = gradtutor("list", *COURSE, home=tmp_path, close=(1,), stderr=subprocess.PIPE)
    assert done.returncode == 74
    assert "cannot write the output" in one_error_line(done.stderr)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_broken_pipe_of_the_real_cli_leaves_no_traceback(tmp_path: Path) -> None:
    """`gradtutor show grad | head -1`. The pipe is shrunk to one page, far below the lesson's
    text, so the tutor is still writing when the reader goes, however fast it runs."""
    import fcntl

    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradtutor", "show", "grad"],
        env={**os.environ, "GRADTUTOR_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    assert proc.stderr is not None
    with os.fdopen(read, encoding="utf-8") as stdout:
        stdout.readline()
    with proc.stderr:  # `head -1` has gone
        assert proc.wait(timeout=PATIENCE_S) == 141
        assert proc.stderr.read() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
def test_a_closed_stdin_quits_the_walkthrough_at_once(tmp_path: Path) -> None:
    done = gradtutor("start", "basics", *COURSE, home=tmp_path, close=(0,),
                     capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "Your place is saved at step 1 of" in done.stdout


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_input_that_is_no_typing_ends_the_walkthrough(tmp_path: Path) -> None:
    with open("/dev/zero") as zeros:  # one "line" without end: never read whole
        done = gradtutor("start", "basics", *COURSE, home=tmp_path, stdin=zeros,
                         capture_output=True)
    assert done.returncode == 0, done.stderr
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
def test_an_unreadable_data_folder_is_one_clear_line(tmp_path: Path, command: list[str]) -> None:
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


# --- lesson text ------------------------------------------------------------------------------

TITLE = "\x1b]0;pwned\x07"  # sets the window's title
CLEAR = "\x1b[2J"  # clears the screen


@pytest.fixture
def hostile_course(tmp_path: Path) -> Path:
    """The fixture course with escape sequences (YAML's `\\e` and `\\a`) in a title, a slide's
    body and code, a quiz choice and an exercise's first hint."""
    folder = tmp_path / "course"
    shutil.copytree(FIXTURES, folder)
    edits = {
        "basics.yaml": [
            ("    title: Welcome\n", '    title: "Welcome\\e]0;pwned\\a"\n'),
            ("    body: Set `requires_grad=True` to track a tensor.\n",
             '    body: "Set `requires_grad=True`\\e[2J to track a tensor."\n'),
            # the slide's code as a double-quoted scalar, so that it can hold an escape
            ("    code: |\n      import torch\n      x = torch.tensor(2.0, requires_grad=True)\n"
             "      y = x * x\n      y.backward()\n      print(x.grad)\n",
             '    code: "import torch\\nprint(\'\\e[2J\')\\n"\n'),
            ('          - text: "4"\n', '          - text: "4\\e[2J"\n'),
        ],
        "second.yaml": [
            ("      - Make a leaf tensor that requires grad.\n",
             '      - "Make a leaf\\e]0;pwned\\a tensor that requires grad.\\e[2J"\n'),
        ],
    }
    for name, changes in edits.items():
        text = (folder / name).read_text(encoding="utf-8")
        for old, new in changes:
            assert old in text, old
            text = text.replace(old, new, 1)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def shows_no_escape_from_the_lesson(out: str) -> None:
    assert TITLE not in out and CLEAR not in out and "\x07" not in out
    assert "\x1b]" not in out  # no OSC at all: Rich's own colours are CSI ... m only


@pytest.mark.parametrize("tty", [False, True])
def test_escapes_in_lesson_text_are_shown_not_obeyed(hostile_course: Path, tty: bool) -> None:
    stdout = io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=stdout, stderr=io.StringIO(),
                      environ={"TERM": "xterm-256color"}, stdin_tty=False, stdout_tty=tty,
                      width=80)
    assert run(["show", "basics", "--lessons", str(hostile_course)], env) == 0
    out = stdout.getvalue()
    shows_no_escape_from_the_lesson(out)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)  # without Rich's colours, the words as written
    for seen in ("Welcome\\x1b]0;pwned\\x07", "`requires_grad=True`\\x1b[2J",
                 "print('\\x1b[2J')", "4\\x1b[2J"):
        assert seen.replace("`", "" if tty else "`") in plain


def test_escapes_in_a_hint_are_shown_not_obeyed(cli: Cli, hostile_course: Path) -> None:
    code, out, err = cli("watch", "square-grad", "--lessons", str(hostile_course),
                         stdin="h\nq\n")
    assert code == 0, err
    shows_no_escape_from_the_lesson(out)
    assert "Make a leaf\\x1b]0;pwned\\x07 tensor that requires grad.\\x1b[2J" in out


def test_every_string_of_a_neutralised_lesson_is_safe(hostile_course: Path) -> None:
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course
    from gradtutor.ui.lesson_text import neutralised

    lessons = load_course(hostile_course, rules=EXERCISE_RULES).lessons
    safe = neutralised(lessons)
    texts = re.findall(r"'((?:[^'\\]|\\.)*)'", repr(lessons))
    assert any("\\x1b" in text for text in texts)  # the course as loaded holds escapes
    for text in strings(safe):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), text
    untouched = load_course(FIXTURES, rules=EXERCISE_RULES).lessons
    assert neutralised(untouched) is untouched  # clean text is left as it is


def strings(value: object) -> list[str]:
    import dataclasses

    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return [s for item in value for s in strings(item)]
    if dataclasses.is_dataclass(value):
        return [s for f in dataclasses.fields(value) for s in strings(getattr(value, f.name))]
    return []


# --- validate: each proof has its limit -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("tty", [False, True])
def test_validate_names_the_proof_that_runs_past_its_limit(tmp_path: Path, tty: bool) -> None:
    """A starter that never returns: its proof is stopped after 3 times the exercise's own
    limit and named in one located line; every other proof still runs, and while they run
    a progress line says which (on a terminal) or which file (in a log)."""
    lesson = tmp_path / "second.yaml"
    text = (FIXTURES / "second.yaml").read_text(encoding="utf-8")
    text = text.replace("    starter: |\n      def read_grad(w, loss_fn):\n          ...\n",
                        "    starter: |\n      def read_grad(w, loss_fn):\n"
                        "          while True:\n              pass\n", 1)
    text = text.replace("    timeout: 5\n", "    timeout: 1\n", 1)
    lesson.write_text(text, encoding="utf-8")
    stderr = io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=stderr,
                      environ={}, stdin_tty=False, stdout_tty=False, stderr_tty=tty, width=400)
    assert run(["validate", str(lesson)], env) == 2
    err = stderr.getvalue()
    assert "Traceback" not in err and "internal error" not in err
    # (on a terminal each status line is written over: a CR, then "erase to the line's end")
    located = [line for line in err.replace("\x1b[K", "").splitlines()
               if line.startswith(f"{lesson}:")]
    row = text.splitlines().index("    starter: |") + 1  # the starter's block, at its '|'
    assert located == [f"{lesson}:{row}:14: the starter of exercise 'square-grad' (seed 0) did not "
                       "finish within 3 s (3 times its time limit); does it loop forever?"]
    # on each seed the starter, the solution and 4 mutants; then the predict and the demo
    total = 6 * len(SEEDS) + 2
    if tty:
        assert f"\r\x1b[Kproof 1 of {total}: " in err
        # the starter's other seeds: skipped once it hung
        assert f"proof {total} of {total}: {lesson}: square-grad" not in err
        assert (f"\r\x1b[Kproof 2 of {total}: {lesson}: square-grad: the solution (seed 0)"
                in err)
    else:
        assert f"proving {lesson} ({total} proofs) ...\n" in err


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_a_tutor_killed_during_validate_leaves_no_proof_running(tmp_path: Path) -> None:
    """validate's batch worker dies with the tutor: kill -9 the tutor while an author's
    looping starter is being proved, and the worker is gone too."""
    import signal
    import time

    lesson = tmp_path / "second.yaml"
    text = (FIXTURES / "second.yaml").read_text(encoding="utf-8")
    looping = tmp_path / "looping"  # the starter says when it loops, once torch is imported
    text = text.replace("    starter: |\n      def read_grad(w, loss_fn):\n          ...\n",
                        "    starter: |\n      def read_grad(w, loss_fn):\n"
                        f"          open({str(looping)!r}, 'w').close()\n"
                        "          while True:\n              pass\n", 1)
    assert str(looping) in text
    lesson.write_text(text, encoding="utf-8")
    tutor = subprocess.Popen([sys.executable, "-m", "gradtutor", "validate", str(lesson)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "GRADTUTOR_HOME": str(tmp_path / "home"),
                                  # proofs run within a check's walls: let it write its sign
                                  WRITABLE_ENV: str(tmp_path)})

    def batch_workers() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if b"gradtutor.runtime.batch" in args and parent == tutor.pid:
                found.append(int(entry.name))
        return found

    def running(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state != "Z"

    deadline = time.monotonic() + 120
    while not batch_workers() and time.monotonic() < deadline:
        time.sleep(0.2)
    workers = batch_workers()
    assert workers, "the batch worker never started"
    while not looping.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert looping.exists(), "the looping proof never started"
    tutor.send_signal(signal.SIGKILL)
    tutor.wait(timeout=PATIENCE_S)
    deadline = time.monotonic() + PATIENCE_S
    while any(running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in workers if running(pid)]
    for pid in left:  # do not leave it looping whatever the verdict
        os.kill(pid, signal.SIGKILL)
    assert left == []
