"""Single key presses from a real terminal, as names: "right", "left", "enter", "a", ...

POSIX terminals are put in cbreak mode only while a key is awaited, so a crash or Ctrl-C
never leaves the learner's terminal broken. Windows reads through msvcrt. A reader can wait
for a limited time, so the walkthrough can do other work (a check's result) between keys.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

# Waits for a key for up to `timeout` seconds (None: for ever); the key, or None if none came.
TimedReader = Callable[[float | None], str | None]

_ESCAPES = {
    "[A": "up", "[B": "down", "[C": "right", "[D": "left",
    "OA": "up", "OB": "down", "OC": "right", "OD": "left",
}


def _name(char: str) -> str:
    if char in ("\r", "\n"):
        return "enter"
    if char == "\x03":
        return "ctrl-c"
    if char in ("\x04", ""):
        return "eof"
    if char in ("\x7f", "\x08"):
        return "backspace"
    if char == " ":
        return "space"
    return char


def posix_reader(stream: TextIO) -> TimedReader:
    import select
    import termios
    import tty

    fd = stream.fileno()

    def read_key(timeout: float | None = None) -> str | None:
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd, termios.TCSANOW)
            # cbreak leaves ISIG on; turn it off so Ctrl-C arrives as a key we handle calmly
            attrs = termios.tcgetattr(fd)
            attrs[3] &= ~termios.ISIG
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            if timeout is not None and not select.select([fd], [], [], max(0.0, timeout))[0]:
                return None
            first = os.read(fd, 1)
            if first and first[0] >= 0xC0:  # the lead byte of a multi-byte UTF-8 character
                rest = b""
                need = 1 if first[0] < 0xE0 else 2 if first[0] < 0xF0 else 3
                while len(rest) < need and select.select([fd], [], [], 0.05)[0]:
                    rest += os.read(fd, need - len(rest))
                return (first + rest).decode("utf-8", "replace")
            char = first.decode("utf-8", "replace")
            if char != "\x1b":
                return _name(char)
            # An escape sequence: ESC, then '[' or 'O', parameters, and one final byte
            # (0x40-0x7E). Read exactly that much so keys typed after it are not lost.
            seq = ""
            while select.select([fd], [], [], 0.05)[0]:
                seq += os.read(fd, 1).decode("ascii", "replace")
                if seq[0] not in "[O" or (len(seq) > 1 and "@" <= seq[-1] <= "~"):
                    break
            return _ESCAPES.get(seq, "esc")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    return read_key


def windows_reader() -> TimedReader:
    import msvcrt

    arrows = {"H": "up", "P": "down", "M": "right", "K": "left"}

    def read_key(timeout: float | None = None) -> str | None:
        if timeout is not None:  # the console has no select(): poll for a waiting key
            deadline = time.monotonic() + timeout
            while not msvcrt.kbhit():  # type: ignore[attr-defined]
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.01)
        char = msvcrt.getwch()  # type: ignore[attr-defined]
        if char in ("\x00", "\xe0"):
            return arrows.get(msvcrt.getwch(), "")  # type: ignore[attr-defined]
        return _name(char)

    return read_key


def timed_reader(stream: TextIO) -> TimedReader:
    """A function that waits, at most the time it is given, for one key press on `stream`
    (a terminal); None when no key came in that time."""
    if sys.platform == "win32":
        return windows_reader()
    return posix_reader(stream)


def key_reader(stream: TextIO) -> Callable[[], str]:
    """A function that blocks for one key press on `stream` (a terminal)."""
    read_key = timed_reader(stream)

    def blocking() -> str:
        key = read_key(None)
        return "eof" if key is None else key

    return blocking
