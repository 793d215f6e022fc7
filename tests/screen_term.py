"""A `gradtutor` in a pseudo-terminal of a given size, whose screen is read cell by cell
through a terminal emulator (pyte): what a test asserts is what the learner sees, not what was
written and then scrolled away (test_fullscreen, test_terminal_keys)."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from waits import PATIENCE_S

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

LEGEND = re.compile(r"q quit\s*$")


class Term:
    """One `gradtutor` in a pseudo-terminal of `columns` x `rows`, and the screen it shows."""

    def __init__(self, args: list[str], home: Path, columns: int, rows: int,
                 **extra: str) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("NO_COLOR", "COLUMNS", "LINES", "GRADTUTOR_DEBUG")}
        env.update(GRADTUTOR_HOME=str(home), TERM="xterm-256color", GRADTUTOR_WARM="0",
                   **extra)
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""
        self.child = pexpect.spawn(sys.executable, ["-m", "gradtutor", *args], env=env,
                                   dimensions=(rows, columns), encoding="utf-8")

    def pump(self) -> None:
        while True:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=0.05)
            except (pexpect.TIMEOUT, pexpect.EOF):
                return
            self.raw += chunk
            self.stream.feed(chunk)

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait(self, what: str, ok: Callable[[list[str]], bool],
             timeout: float = PATIENCE_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if ok(self.lines):
                return
        shown = "\n".join(self.lines)
        raise AssertionError(f"waiting for {what}; the screen shows:\n{shown}")

    def shows(self, *texts: str, timeout: float = 15) -> None:
        """Each text somewhere on the screen, and the legend on its last row."""
        self.wait(", ".join(texts),
                  lambda lines: all(any(t in line for line in lines) for t in texts)
                  and bool(LEGEND.search(lines[-1])), timeout)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def resize(self, columns: int, rows: int) -> None:
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def end(self) -> int:
        """Wait for the process to exit; its exit status (128+n for signal n)."""
        self.child.expect(pexpect.EOF, timeout=PATIENCE_S)
        self.raw += self.child.before or ""
        self.child.close()
        if self.child.signalstatus is not None:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus)
