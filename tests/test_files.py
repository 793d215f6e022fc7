"""Every file the tutor reads is read through one helper: never from a pipe, a device or a
folder, and never more than its cap, through the real code on real files."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from narrowing import step_as

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import GradtutorError
from gradtutor.files import FileTooLarge, NotAFile, read_capped
from gradtutor.lessons import cache
from gradtutor.lessons.load import load_lesson_file
from gradtutor.lessons.model import Exercise
from gradtutor.watching import FileWatch
from gradtutor.workspace import read_exercise_file

if TYPE_CHECKING:
    from conftest import Cli

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="named pipes and /dev are POSIX")
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
COURSE = Path(__file__).parent / "fixtures" / "course"


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def peak_bytes_while(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
    except GradtutorError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def test_a_regular_file_is_read_whole_up_to_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_capped(path, 100) == b"x" * 100
    with pytest.raises(FileTooLarge) as raised:
        read_capped(path, 99)
    assert raised.value.message == f"cannot read {path}: it is 100 bytes, more than the 99 " \
                                   "bytes gradtutor reads from such a file"


@POSIX
def test_a_named_pipe_is_refused_at_once_with_one_line(tmp_path: Path, no_hang: None) -> None:
    path = fifo(tmp_path / "answer.py")
    with pytest.raises(NotAFile) as raised:
        read_exercise_file(path)
    assert raised.value.message == (f"cannot read {path}: it is a named pipe (FIFO), not a "
                                    "regular file")
    assert raised.value.hint == "name the file with your answer"


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotAFile, match="it is a folder, not a regular file"):
        read_capped(tmp_path, 100)


@POSIX
def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(NotAFile, match="it is a socket"):
            read_capped(path, 100)
    finally:
        server.close()


@POSIX
def test_a_workspace_file_linked_to_dev_zero_is_never_read(tmp_path: Path) -> None:
    path = tmp_path / "read-grad.py"
    path.symlink_to("/dev/zero")
    peak = peak_bytes_while(lambda: read_exercise_file(path))
    with pytest.raises(NotAFile, match="it is a device, not a regular file"):
        read_exercise_file(path)
    assert peak < 1024**2


def test_a_1_gib_workspace_file_is_judged_without_being_read(tmp_path: Path) -> None:
    from gradtutor.lessons.load import load_lesson
    from gradtutor.runtime.cold import ColdEngine
    from gradtutor.runtime.run import run_check

    exercise = step_as(load_lesson(COURSE / "second.yaml", EXERCISE_RULES), 0, Exercise)
    path = tmp_path / "square-grad.py"
    with open(path, "wb") as handle:  # sparse: 1 GiB long, no disk used
        handle.truncate(1024**3)
    peak = peak_bytes_while(lambda: read_exercise_file(path))
    verdict = run_check(exercise, path, seed=1, engine=ColdEngine(environ=dict(os.environ)))
    assert verdict.status == "error"
    assert verdict.checks[0].message == ("Your file is 1024.0 MiB, more than the 1024 KiB a "
                                         "check accepts.")
    assert peak < 4 * 1024**2


@LINUX
def test_a_file_that_says_it_is_empty_is_still_cut_at_its_cap(tmp_path: Path) -> None:
    # /proc files claim a size of 0: the cap must hold while reading, not only before
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(FileTooLarge):
        read_capped(Path("/proc/self/maps"), 64)


@POSIX
def test_a_lesson_file_that_is_a_pipe_is_one_located_problem(tmp_path: Path, no_hang: None) -> None:
    path = fifo(tmp_path / "extra.yaml")
    lesson, problems = load_lesson_file(path, EXERCISE_RULES)
    assert lesson is None
    assert [p.message for p in problems] == [
        "it is a named pipe (FIFO), not a regular file; name a lesson file"]


def test_a_lesson_file_too_large_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as handle:
        handle.truncate(1024**3)
    peak = peak_bytes_while(lambda: load_lesson_file(path, EXERCISE_RULES))
    lesson, problems = load_lesson_file(path, EXERCISE_RULES)
    assert lesson is None
    assert [p.message for p in problems] == [
        "the file is 1073741824 bytes; lessons are limited to 2000000"]
    assert peak < 4 * 1024**2


@POSIX
def test_a_cache_entry_that_is_a_pipe_is_a_miss_and_is_replaced(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                no_hang: None) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    copy = tmp_path / "basics.yaml"
    shutil.copy(COURSE / "basics.yaml", copy)
    entry = cache._entry(copy.read_text(encoding="utf-8"), cache.checked_by(EXERCISE_RULES.state))
    entry.parent.mkdir(parents=True)
    fifo(entry)
    lesson, problems = load_lesson_file(copy, EXERCISE_RULES)
    assert lesson is not None and problems == []
    assert entry.is_file()  # the cache wrote a real entry over the pipe


def test_a_killed_cache_write_leaves_no_file_behind_after_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    folder = cache.cache_dir()
    folder.mkdir(parents=True)
    old = folder / ".lesson-0123.json.abcd1234.tmp"
    fresh = folder / ".lesson-4567.json.efgh5678.tmp"  # maybe another tutor's, mid-write
    other = folder / "notes.tmp"  # not ours
    for path in (old, fresh, other):
        path.write_text("{")
    os.utime(old, (0, 0))
    os.utime(other, (0, 0))
    load_lesson_file(COURSE / "basics.yaml", EXERCISE_RULES)
    assert not old.exists()
    assert fresh.exists() and other.exists()


@POSIX
def test_watching_a_pipe_does_not_hang(tmp_path: Path, no_hang: None) -> None:
    path = fifo(tmp_path / "square-grad.py")
    seen: list[str] = []
    watch = FileWatch(path, seen.append, use_events=False, poll_s=0.01)
    watch.start()
    watch.stop()
    assert seen == []


def test_an_order_file_of_1_gib_is_a_file_error_verdict_read_unread(cli: Cli,
                                                                    tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    with open(answer, "wb") as handle:
        handle.truncate(1024**3)
    code, out, err = cli("check", "order-the-loop", str(answer), "--json")
    assert (code, err) == (1, "")
    check = json.loads(out)["checks"][0]
    assert (check["name"], check["status"]) == ("file", "error")
    assert check["message"] == (f"{answer} is 1073741824 bytes; an answer of 5 lines is short")



@POSIX
def test_a_lesson_opens_and_checks_with_a_pipe_as_the_workspace_file(cli: Cli, tmp_path: Path,
                                                                     no_hang: None) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    path = fifo(folder / "square-grad.py")
    code, out, err = cli("start", "second", "--workspace", str(folder), "--lessons",
                         str(COURSE), stdin="c\nq\n", width=200)
    assert (code, err) == (0, "")
    assert "Define `read_grad(w, loss_fn)`" in out  # the first screen came
    flat = " ".join(out.split())  # however the line wraps
    assert (f"Could not check: cannot read {path}: it is a named pipe (FIFO), not a regular "
            "file (name the file with your answer)." in flat)
    assert "Your place is saved at step 1 of 4." in out


@POSIX
def test_a_file_swapped_for_a_pipe_after_it_was_looked_at_is_caught(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    no_hang: None) -> None:
    regular = tmp_path / "regular"
    regular.write_text("x")
    path = fifo(tmp_path / "answer.py")
    looked_at = os.stat(regular)
    # the look saw a regular file
    monkeypatch.setattr("gradtutor.files.os.stat", lambda p: looked_at)
    with pytest.raises(NotAFile, match="it is a named pipe"):
        read_capped(path, 100)
