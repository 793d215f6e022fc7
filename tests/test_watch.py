"""Noticing saves (file events and the stat poll), the workspace's starter files, and which
editor `e` opens. The watcher runs for real on a temporary folder; no mocks."""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from waits import PATIENCE_S

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Exercise
from gradtutor.watching import FileWatch, events_enabled
from gradtutor.workspace import (
    content_digest,
    editor_command,
    exercise_path,
    open_in_editor,
    write_starter,
)

if TYPE_CHECKING:
    from conftest import Cli

FIXTURES = Path(__file__).parent / "fixtures" / "course"
WAIT_S = PATIENCE_S  # a ceiling (tests/waits.py): 5 s once ran out under CPU burners


def save_like_an_editor(path: Path, text: str) -> None:
    """Write a temporary file beside `path` and rename it over `path`, as most editors do."""
    temporary = path.with_name(f".{path.name}.swp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Seen:
    """A watcher on `path` and the digests it reported."""

    def __init__(self, path: Path, use_events: bool) -> None:
        self.digests: queue.Queue[str] = queue.Queue()
        self.watch = FileWatch(path, self.digests.put, use_events=use_events)
        self.watch.start()

    def next(self, timeout: float = WAIT_S) -> str | None:
        try:
            return self.digests.get(timeout=timeout)
        except queue.Empty:
            return None


@pytest.fixture(params=[True, False], ids=["events", "polling"])
def use_events(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def test_a_save_by_rename_is_reported_once_with_its_content(tmp_path: Path,
                                                            use_events: bool) -> None:
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events)
    try:
        save_like_an_editor(path, "answer\n")
        assert seen.next() == content_digest(b"answer\n")
        assert seen.next(timeout=1.0) is None  # one save, one report
    finally:
        seen.watch.stop()


def test_a_save_that_changes_nothing_is_not_reported(tmp_path: Path, use_events: bool) -> None:
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events)
    try:
        save_like_an_editor(path, "starter\n")
        path.write_text("starter\n")  # written in place too: new mtime, same content
        assert seen.next(timeout=1.5) is None
        save_like_an_editor(path, "changed\n")
        assert seen.next() == content_digest(b"changed\n")
    finally:
        seen.watch.stop()


def test_a_burst_of_writes_is_read_once_it_settles(tmp_path: Path, use_events: bool) -> None:
    path = tmp_path / "read-grad.py"
    path.write_text("")
    seen = Seen(path, use_events)
    try:
        with path.open("a") as handle:  # an editor that writes its file in several pieces
            for n in range(5):
                handle.write(f"line {n}\n")
                handle.flush()
                time.sleep(0.01)
        final = "".join(f"line {n}\n" for n in range(5)).encode()
        reported = [seen.next()]
        while (more := seen.next(timeout=1.0)) is not None:
            reported.append(more)
        assert reported[-1] == content_digest(final)
        assert len(reported) <= 2  # settled, not one check per write
        if use_events and sys.platform.startswith("linux"):
            assert reported == [content_digest(final)]  # inotify: read when the file is closed
    finally:
        seen.watch.stop()


def truncate_then_write(path: Path, text: str) -> None:
    """Empty the file, then write it, through one open file: an editor that saves in place."""
    with path.open("r+", encoding="utf-8") as handle:
        handle.truncate(0)
        handle.flush()
        handle.write(text)


@pytest.mark.parametrize("save", [save_like_an_editor, truncate_then_write],
                         ids=["temporary-then-rename", "truncate-then-write"])
def test_a_save_in_several_steps_is_reported_once_on_its_final_content(
        tmp_path: Path, use_events: bool, save: Callable[[Path, str], None]) -> None:
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events)
    try:
        for text in ("first answer\n", "second answer\n"):
            save(path, text)
            assert seen.next() == content_digest(text.encode())
            assert seen.next(timeout=1.5) is None  # not the empty file, nor a second report
    finally:
        seen.watch.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
@pytest.mark.parametrize("steps", ["truncate-then-write", "two-opens"])
def test_with_inotify_a_file_being_written_is_read_only_once_its_writer_is_done(
        tmp_path: Path, steps: str) -> None:
    """The watcher has seen the file emptied, yet it waits: the writer is not done with it
    (the file is still open), or writes it again at once (in a second open)."""
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events=True)
    try:
        if steps == "truncate-then-write":
            with path.open("r+", encoding="utf-8") as handle:
                handle.truncate(0)
                handle.flush()
                assert wait_until(lambda: seen.watch.events_seen)
                handle.write("answer\n")
        else:
            path.write_text("")
            path.write_text("answer\n")
        assert seen.next() == content_digest(b"answer\n")
        assert seen.next(timeout=1.5) is None
        assert seen.watch.events_seen
    finally:
        seen.watch.stop()


def wait_until(condition: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def test_polling_alone_finds_saves(tmp_path: Path) -> None:
    """What a network drive or WSL's /mnt gets, where file events never arrive."""
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events=False)
    try:
        save_like_an_editor(path, "one\n")
        assert seen.next() == content_digest(b"one\n")
        path.write_text("two\n")
        assert seen.next() == content_digest(b"two\n")
        assert not seen.watch.events_seen
    finally:
        seen.watch.stop()


def test_a_deleted_file_is_not_a_save_and_its_return_is(tmp_path: Path, use_events: bool) -> None:
    path = tmp_path / "read-grad.py"
    path.write_text("starter\n")
    seen = Seen(path, use_events)
    try:
        path.unlink()
        assert seen.next(timeout=1.0) is None
        path.write_text("back again\n")
        assert seen.next() == content_digest(b"back again\n")
    finally:
        seen.watch.stop()


def test_gradtutor_watch_poll_turns_file_events_off() -> None:
    assert events_enabled({})
    assert events_enabled({"GRADTUTOR_WATCH": "events"})
    assert not events_enabled({"GRADTUTOR_WATCH": "poll"})


# --- the workspace ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def exercise() -> Exercise:
    step = load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES).steps[0]
    assert isinstance(step, Exercise)
    return step


def test_the_starter_is_written_once_and_never_over_the_learners_file(tmp_path: Path,
                                                                      exercise: Exercise) -> None:
    folder = tmp_path / "new" / "workspace"
    assert write_starter(folder, exercise) is True
    path = exercise_path(folder, exercise.id)
    assert path.read_text(encoding="utf-8") == exercise.starter
    path.write_text("my work\n")
    assert write_starter(folder, exercise) is False
    assert path.read_text() == "my work\n"


def test_a_workspace_that_cannot_be_made_is_a_message_with_a_hint(tmp_path: Path,
                                                                  exercise: Exercise) -> None:
    from gradtutor.errors import GradtutorError

    in_the_way = tmp_path / "workspace"
    in_the_way.write_text("a file where the folder should be")
    with pytest.raises(GradtutorError) as raised:
        write_starter(in_the_way, exercise)
    assert raised.value.message.startswith(f"cannot make the workspace folder {in_the_way}")
    assert "--workspace" in raised.value.hint
    assert in_the_way.read_text() == "a file where the folder should be"


def found_only(*names: str) -> Callable[[str], str | None]:
    return lambda name: f"/usr/bin/{name}" if name in names else None


@pytest.mark.parametrize(("environ", "windows", "expected"), [
    ({"VISUAL": "code -w", "EDITOR": "vi"}, False, ["code", "-w"]),
    ({"EDITOR": "emacs -nw"}, False, ["emacs", "-nw"]),
    ({"EDITOR": "'/opt/my editor/ed' --wait"}, False, ["/opt/my editor/ed", "--wait"]),
    ({"EDITOR": '"C:\\Program Files\\Notepad++\\notepad++.exe" -multiInst'}, True,
     ["C:\\Program Files\\Notepad++\\notepad++.exe", "-multiInst"]),
    ({"VISUAL": "  ", "EDITOR": "nano"}, False, ["nano"]),
    ({}, True, ["notepad"]),
    ({}, False, ["/usr/bin/nano"]),
])
def test_the_editor_comes_from_visual_then_editor_then_a_fallback(
    environ: dict[str, str], windows: bool, expected: list[str],
) -> None:
    assert editor_command(environ, found_only("nano", "vi"), windows) == expected


def test_without_nano_vim_then_vi_are_tried_and_else_there_is_none() -> None:
    assert editor_command({}, found_only("vi", "vim"), False) == ["/usr/bin/vim"]
    assert editor_command({}, found_only("vi"), False) == ["/usr/bin/vi"]
    assert editor_command({}, found_only(), False) is None


@pytest.mark.skipif(os.name != "posix", reason="uses a shell script as the editor")
def test_open_in_editor_passes_the_file_last_and_reports_problems(tmp_path: Path) -> None:
    target = tmp_path / "read-grad.py"
    target.write_text("")
    script = tmp_path / "fake-editor"
    script.write_text('#!/bin/sh\necho "$1 $2" > "$2"\n')
    script.chmod(0o755)
    assert open_in_editor(target, {"EDITOR": f"{script} --wait"}) is None
    assert target.read_text().strip() == f"--wait {target}"

    missing = open_in_editor(target, {"EDITOR": "no-such-editor-anywhere -w"})
    assert missing == "The editor 'no-such-editor-anywhere' was not found: check VISUAL or EDITOR."
    failed = open_in_editor(target, {"EDITOR": "false"})
    assert failed == "The editor 'false' ended with exit code 1."


# --- gradtutor watch, without a terminal -------------------------------------------------


def test_watch_opens_the_first_exercise_not_passed_and_q_stops(cli: Cli, course_dir: Path,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    code, out, err = cli("watch", "--lessons", str(course_dir), "--workspace", str(folder),
                         stdin="h\nq\n", environ={"GRADTUTOR_WARM": "0"})  # no check runs
    assert (code, err) == (0, "")
    assert "Read a gradient" in out and "Hint 1 of 3" in out
    assert out.rstrip().endswith(f"Stopped watching {folder / 'square-grad.py'}.")
    assert (folder / "square-grad.py").is_file()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_next_in_watch_stays_watching_as_on_the_walkthroughs_exercise_screen(
        cli: Cli, course_dir: Path, tmp_path: Path, lang: str) -> None:
    folder = tmp_path / "ws"
    code, out, err = cli("watch", "--lessons", str(course_dir), "--workspace", str(folder),
                         "--lang", lang, stdin="n\nh\nq\n", environ={"GRADTUTOR_WARM": "0"})
    assert (code, err) == (0, "")
    only = {"en": "This is the only step here: q stops watching.",
            "zh": "这里只有这一步：按 q 停止监视。"}[lang]
    assert only in out
    hint = {"en": "Hint 1 of 3", "zh": "提示 1/3"}[lang]
    assert out.index(only) < out.index(hint)  # still watching: h after n shows a hint


def test_watch_names_an_unknown_exercise_with_a_hint(cli: Cli, course_dir: Path) -> None:
    code, out, err = cli("watch", "sqare-grad", "--lessons", str(course_dir))
    assert code == 2
    assert err == ("gradtutor: error: no exercise 'sqare-grad' "
                   "(hint: did you mean 'square-grad'?)\n")


def test_watch_after_every_exercise_is_passed_asks_for_one_by_name(cli: Cli,
                                                                   course_dir: Path) -> None:
    from gradtutor.progress import record_check
    from gradtutor.store import ProgressStore

    ProgressStore(cli.home, lambda line: None).update(
        lambda p: record_check(p, "second", "square-grad", True, "t"))
    code, out, err = cli("watch", "--lessons", str(course_dir))
    assert code == 2
    assert err.startswith("gradtutor: error: you have passed every exercise (hint: name one")
    assert "gradtutor watch square-grad" in err
