"""Reading from a process with a clock: one wait for an fd, and one reader of lines, each
awaited until a deadline. Used for the fork server's control socket, its reference process
and validate's batch worker."""

from __future__ import annotations

import os
import select
import time


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
            if not readable_within(self._fd, left):
                return None
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
