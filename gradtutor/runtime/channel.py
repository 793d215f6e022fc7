"""Reading from a process with a clock: one wait for an fd, one reader of lines, each
awaited until a deadline (the fork server's sockets, the reference process, validate's batch
worker), and the drain that reads a worker's pipes to their end.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Callable


def readable_within(fd: int, seconds: float | None) -> bool:
    """Whether `fd` has something to read (or its end) within `seconds` (None: wait)."""
    try:
        readable, _, _ = select.select([fd], [], [], None if seconds is None
                                       else max(0.0, seconds))
    except (OSError, ValueError):  # closed under us: reading it tells
        return True
    return bool(readable)


class LineReader:
    """Lines from a pipe or stream socket `fd`, each awaited until a deadline. `ended`: its
    end was read, or reading failed; the reader does not own `fd`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._held = b""
        self.ended = False

    def next(self, seconds: float | None) -> bytes | None:
        """The next line (without its newline); None if none came in `seconds` (None: no
        limit) or the stream ended first (`ended`)."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while b"\n" not in self._held:
            left = None if deadline is None else deadline - time.monotonic()
            if self.ended or (left is not None and left <= 0):
                return None
            if left is not None and not readable_within(self._fd, left):
                return None  # (no deadline: read and block, where select cannot wait on a pipe)
            try:
                chunk = os.read(self._fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self.ended = True
                return None
            self._held += chunk
        line, _, self._held = self._held.partition(b"\n")
        return line


class Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first `cap` bytes and counting the rest, so a
    writer never blocks on a full pipe and a flood never grows the tutor. For the result
    channel it also notes when the first and second line arrived.

    The drain owns its fd and closes it at the end: if a process that escaped the cleanup
    still holds the pipe open (macOS, Windows), the tutor stops waiting for the drain, but
    the fd is not closed under it and reused for something else."""

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0
        self.lines = 0
        self.first_line = threading.Event()  # "expected" arrived: learner code starts now
        self.first_line_at = 0.0
        self._on_first_line: Callable[[], None] | None = None
        self._callback_lock = threading.Lock()
        self.complete = threading.Event()  # the final message arrived
        self.complete_at = 0.0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self._take(chunk)
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def when_first_line(self, callback: Callable[[], None]) -> None:
        """Call `callback` (once, in the drain's thread) as soon as the first line arrives, or
        now if it has: the moment learner code is about to start."""
        with self._callback_lock:
            arrived = self.first_line.is_set()
            if not arrived:
                self._on_first_line = callback
        if arrived:
            callback()

    def _take(self, chunk: bytes) -> None:
        room = max(0, self.cap - len(self.kept))
        self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - room)
        if self.lines < 2 and b"\n" in chunk:
            self.lines += chunk.count(b"\n")
            now = time.monotonic()
            if not self.first_line.is_set():
                self.first_line_at = now
                with self._callback_lock:
                    self.first_line.set()
                    callback = self._on_first_line
                if callback is not None:
                    with contextlib.suppress(Exception):  # the drain must go on reading
                        callback()
            if self.lines >= 2:
                self.complete_at = now
                self.complete.set()
