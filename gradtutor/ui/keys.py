"""Single key presses from a real terminal, as names: "right", "left", "enter", "a", ...

POSIX terminals are put in cbreak mode only while a key is awaited, so a crash or Ctrl-C
never leaves the learner's terminal broken. Windows reads through msvcrt. A reader can wait
for a limited time, so the walkthrough can do other work (a check's result) between keys.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

# Waits for a key for up to `timeout` seconds (None: for ever); the key, or None if none came.
TimedReader = Callable[[float | None], str | None]

# The final byte of a CSI (ESC [) or SS3 (ESC O) sequence without a number: xterm's cursor
# keys, Home/End, F1-F4 and Shift-Tab.
_FINALS = {
    "A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end",
    "P": "f1", "Q": "f2", "R": "f3", "S": "f4", "Z": "shift-tab", "E": "begin",
}
# The number of a VT220-style `ESC [ n ~` sequence.
_TILDES = {
    1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pgup", 6: "pgdn", 7: "home", 8: "end",
    11: "f1", 12: "f2", 13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9",
    21: "f10", 23: "f11", 24: "f12",
}
# The Linux console's F1-F5: `ESC [ [ A` ... `ESC [ [ E`.
_LINUX_F = {"[A": "f1", "[B": "f2", "[C": "f3", "[D": "f4", "[E": "f5"}


def decode_escape(seq: str) -> str:
    """The key named by an escape sequence, given what follows the ESC: `[5~` -> "pgup".

    Modifiers (`[1;5C`, Ctrl-→) are ignored: the key is the key. A mouse wheel report in
    SGR form (`[<64;10;5M`) is "wheel-up" or "wheel-down"; any other mouse report, or a
    sequence this does not know, is "unknown"; a lone ESC is "esc"; ESC then a plain key
    (Alt+key) is "alt-" and that key."""
    if not seq:
        return "esc"
    if seq[0] not in "[O":
        return "alt-" + _name(seq[0])
    body = seq[1:]
    if seq[0] == "[" and body in _LINUX_F:
        return _LINUX_F[body]
    if body.startswith("<") and body[-1:] in ("M", "m"):
        button = body[1:].split(";")[0]
        return {"64": "wheel-up", "65": "wheel-down"}.get(button, "unknown")
    if not body:
        return "unknown"
    final, params = body[-1], body[:-1].split(";")
    if final == "~":
        number = params[0]
        return _TILDES.get(int(number), "unknown") if number.isdigit() else "unknown"
    if final in _FINALS and all(p.isdigit() or not p for p in params):
        return _FINALS[final]
    return "unknown"


def _name(char: str) -> str:
    if char in ("\r", "\n"):
        return "enter"
    if char == "\x03":
        return "ctrl-c"
    if char == "\x04":
        return "ctrl-d"
    if char == "":  # the terminal is gone
        return "eof"
    if char in ("\x7f", "\x08"):
        return "backspace"
    if char == " ":
        return "space"
    if char == "\t":
        return "tab"
    return char


# What is written to the reader's `wake` descriptor: by the signal handlers, the terminal was
# resized, or the tutor was interrupted (Ctrl-C while the keys were not being read, SIGTERM,
# SIGHUP); by a background thread, it posted news (a save, a verdict) that is not to wait
# for the reader's timeout.
WAKE_RESIZE = b"!"
WAKE_INTERRUPT = b"\x03"
WAKE_NEWS = b"n"


def posix_reader(stream: TextIO, wake: int | None = None) -> TimedReader:
    """`wake`: a file descriptor that becomes readable when a signal came (its handler writes
    to it) or news was posted; the reader then drains it and answers "ctrl-c" if one of the
    signals was an interrupt (`WAKE_INTERRUPT`), "resize" for a resize, else None (no key:
    the caller looks at its news)."""
    import select
    import termios
    import tty

    fd = stream.fileno()
    waits = [fd] if wake is None else [fd, wake]
    held = bytearray()  # a byte read ahead that starts the next key (ESC after a lone ESC)

    def byte(wait: float | None) -> bytes | None:
        """The next byte, from what was read ahead first; None if none came in `wait` s."""
        if held:
            return bytes([held.pop(0)])
        if wait is not None and not select.select([fd], [], [], wait)[0]:
            return None
        return os.read(fd, 1)

    def read_key(timeout: float | None = None) -> str | None:
        try:
            return read(timeout)
        except (OSError, termios.error):  # the terminal hung up (EIO): as if it had closed
            return "eof"

    def read(timeout: float | None) -> str | None:
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd, termios.TCSANOW)
            # cbreak leaves ISIG on; turn it off so Ctrl-C arrives as a key we handle calmly
            attrs = termios.tcgetattr(fd)
            attrs[3] &= ~termios.ISIG
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            if not held:
                wait = None if timeout is None else max(0.0, timeout)
                ready = select.select(waits, [], [], wait)[0]
                if wake is not None and wake in ready:
                    came = b""
                    with contextlib.suppress(BlockingIOError):
                        came = os.read(wake, 512)
                    if WAKE_INTERRUPT in came:
                        return "ctrl-c"
                    return "resize" if WAKE_RESIZE in came else None
                if not ready:
                    return None
            first = byte(None) or b""
            if first and first[0] >= 0xC0:  # the lead byte of a multi-byte UTF-8 character
                rest = b""
                need = 1 if first[0] < 0xE0 else 2 if first[0] < 0xF0 else 3
                while len(rest) < need and (more := byte(0.05)) is not None:
                    rest += more
                return (first + rest).decode("utf-8", "replace")
            char = first.decode("utf-8", "replace")
            if char != "\x1b":
                return _name(char)
            # An escape sequence: ESC, then '[' or 'O', parameters, and one final byte
            # (0x40-0x7E). Read exactly that much so keys typed after it are not lost.
            seq = ""
            while (more := byte(0.05)) is not None:
                if more == b"\x1b" and not seq:  # a lone Esc, then another key's sequence
                    held.extend(more)
                    break
                seq += more.decode("ascii", "replace")
                if seq == "[[":  # the Linux console's F-keys: one more byte
                    continue
                if seq[0] not in "[O" or (len(seq) > 1 and "@" <= seq[-1] <= "~"):
                    break
            return decode_escape(seq)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    return read_key


# The Windows console's special keys: the code that follows a lead "\x00" or "\xe0".
WINDOWS_KEYS = {
    "H": "up", "P": "down", "M": "right", "K": "left", "I": "pgup", "Q": "pgdn", "G": "home",
    "O": "end", "R": "insert", "S": "delete", "\x0f": "shift-tab",
    ";": "f1", "<": "f2", "=": "f3", ">": "f4", "?": "f5", "@": "f6", "A": "f7", "B": "f8",
    "C": "f9", "D": "f10", "\x85": "f11", "\x86": "f12",
}


def windows_reader() -> TimedReader:
    import msvcrt

    def read_key(timeout: float | None = None) -> str | None:
        if timeout is not None:  # the console has no select(): poll for a waiting key
            deadline = time.monotonic() + timeout
            while not msvcrt.kbhit():  # type: ignore[attr-defined]
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.01)
        char = msvcrt.getwch()  # type: ignore[attr-defined]
        if char in ("\x00", "\xe0"):
            return WINDOWS_KEYS.get(msvcrt.getwch(), "unknown")  # type: ignore[attr-defined]
        if char == "\x1b":
            return "esc"
        return _name(char)

    return read_key


def timed_reader(stream: TextIO, wake: int | None = None) -> TimedReader:
    """A function that waits, at most the time it is given, for one key press on `stream`
    (a terminal); None when no key came in that time. `wake`: see `posix_reader`."""
    if sys.platform == "win32":
        return windows_reader()
    return posix_reader(stream, wake)


def key_reader(stream: TextIO) -> Callable[[], str]:
    """A function that blocks for one key press on `stream` (a terminal)."""
    read_key = timed_reader(stream)

    def blocking() -> str:
        key = read_key(None)
        return "eof" if key is None else key

    return blocking
