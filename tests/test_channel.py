"""The one reader of lines with a deadline (runtime/channel.py), which the tutor uses on the
fork server's reference socket, validate's batch worker and a reference process's pipe."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from gradtutor.runtime.channel import LineReader


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_lines_written_together_are_read_one_at_a_time(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, b'{"ready": true}\n{"job": 0}\npart')
    lines = LineReader(read)
    assert lines.next(5.0) == b'{"ready": true}'
    assert lines.next(5.0) == b'{"job": 0}'
    os.write(write, b" of a line\n")
    assert lines.next(5.0) == b"part of a line"


def test_no_line_by_the_deadline_is_none_and_the_stream_goes_on(pipe: tuple[int, int]) -> None:
    read, write = pipe
    lines = LineReader(read)
    os.write(write, b"no newline yet")
    assert lines.next(0.01) is None and not lines.ended
    os.write(write, b"\n")
    assert lines.next(5.0) == b"no newline yet"


def test_the_end_of_the_stream_is_none_and_ended(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, b"last\nunfinished")
    os.close(write)
    lines = LineReader(read)
    assert lines.next(None) == b"last"
    assert lines.next(None) is None and lines.ended
    assert lines.next(5.0) is None  # and stays ended
