"""Process-wide things in one object: streams, whether they are terminals, environment
variables, where progress lives, the options every command takes, and the consoles built from
them. Tests pass their own.
"""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, cast

from rich.console import Console

from gradtutor.i18n import ENGLISH, Translator, msg
from gradtutor.store import default_home

MAX_WIDTH = 100


@dataclass
class Options:
    """The options every command takes, before its name or after it (`gradtutor --lessons DIR
    list` or `gradtutor list --lessons DIR`); given twice, the later one counts."""

    lessons: Path | None = None
    workspace: Path | None = None
    plain: bool = False
    debug: bool = False


@dataclass
class Environment:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    environ: Mapping[str, str]
    stdin_tty: bool
    stdout_tty: bool
    width: int | None = None  # None: follow the terminal
    utf8: bool = True  # can stdout show box drawing and symbols?
    stderr_tty: bool = False
    options: Options = field(default_factory=Options)
    # The learner's language, set once by the CLI (`--lang`, GRADTUTOR_LANG, the locale), and
    # the translator that says the core's messages in it. English until then.
    tr: Translator = ENGLISH
    # The operating system's own locale, asked only when neither --lang nor a variable says
    # which language; tests keep the default, so the machine they run on cannot change them.
    system_locale: Callable[[], str | None] = lambda: None
    _consoles: dict[bool, Console] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.stdout, Output):
            self.stdout = cast(TextIO, Output(self.stdout))

    @classmethod
    def from_os(cls) -> Environment:
        for stream in (sys.stdout, sys.stderr):
            # A console that cannot encode a character shows "?" instead of crashing.
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="replace")
        encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
        for name in ("COLUMNS", "LINES"):
            # Rich and Typer read these too, and fail on one like 5000 digits: only a size
            # that means something is left for them (0, "-5" or "１２" is as if unset)
            if name in os.environ and size_variable(os.environ, name) is None:
                del os.environ[name]
        # A stream closed before the start (`0<&-`, `>&-`) is None here: no input is an empty
        # one, and output to nowhere fails at the first write, with one line at the boundary.
        stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
        stdout = sys.stdout if sys.stdout is not None else cast(TextIO, _Closed())
        stderr = sys.stderr if sys.stderr is not None else cast(TextIO, _Closed())
        return cls(stdin=stdin, stdout=stdout, stderr=stderr, environ=os.environ,
                   stdin_tty=_isatty(sys.stdin), stdout_tty=_isatty(sys.stdout),
                   stderr_tty=_isatty(sys.stderr),
                   utf8=encoding in ("utf8", "cp65001"), system_locale=_system_locale)

    @property
    def home(self) -> Path:
        return default_home(self.environ)

    @property
    def interactive(self) -> bool:
        """Single key presses are possible: both ends are a real terminal."""
        return self.stdin_tty and self.stdout_tty and self.environ.get("TERM") != "dumb"

    @property
    def status_line(self) -> bool:
        """A status line on stderr is seen where the output will come: stdout and stderr
        are both a terminal (not a dumb one). A pipe or a file gets no status text."""
        return self.stdout_tty and self.stderr_tty and self.environ.get("TERM") != "dumb"

    def plain(self, asked: bool = False) -> bool:
        """No colour and no box drawing: asked for (here or by --plain anywhere on the line),
        NO_COLOR set, a dumb terminal, an output that is not a terminal (a pipe or a file), or
        one that cannot encode the symbols."""
        return (asked or self.options.plain or not self.stdout_tty
                or self.environ.get("NO_COLOR", "") != ""
                or self.environ.get("TERM") == "dumb" or not self.utf8)

    @property
    def lang(self) -> str:
        return self.tr.lang

    def columns(self) -> int:
        if self.width is not None:
            return self.width
        columns = size_variable(self.environ, "COLUMNS")
        if columns is not None:
            return columns
        return max(1, shutil.get_terminal_size((80, 24)).columns)

    def terminal_size(self) -> tuple[int, int]:
        """The terminal's columns and rows now (a fixed `width` wins, for tests); asked of
        the terminal itself, so a resize shows even where COLUMNS was set at start."""
        try:
            size = os.get_terminal_size(self.stdout.fileno())
            columns, rows = size.columns, size.lines
        except (AttributeError, ValueError, OSError):
            columns, rows = self.columns(), size_variable(self.environ, "LINES") or 24
        if self.width is not None:
            columns = self.width
        return max(1, columns), max(1, rows)

    def console(self, plain: bool) -> Console:
        """The console for stdout; text never runs wider than MAX_WIDTH columns."""
        console = self._consoles.get(plain)
        if console is None:
            # Rich pads each line to the width with spaces: noise in a pipe or a file.
            out = self.stdout if self.stdout_tty else cast(TextIO, _NoTrailingSpaces(self.stdout))
            console = Console(
                file=out,
                no_color=plain,
                color_system=None if plain or not self.stdout_tty else "auto",
                force_terminal=self.stdout_tty and not plain,
                emoji=False,
                markup=False,  # lesson text and file names are never markup
                highlight=False,
                legacy_windows=False,
            )
            self._consoles[plain] = console
        console.width = max(20, min(self.columns(), MAX_WIDTH))
        return console

    def error(self, line: str) -> None:
        """One line on stderr. On a terminal it is wrapped at spaces (between characters in
        Chinese), never inside a `command`, so that the terminal does not cut a word in two;
        elsewhere it stays one line, for grep."""
        from gradtutor.ui.safe_text import neutralise

        # what the user typed or a file held (an id, a path) may carry escape sequences
        line = neutralise(line.rstrip("\n"))
        if self.stderr_tty:
            line = wrap_message(line, self.columns())
        try:
            self.stderr.write(line + "\n")
            self.stderr.flush()
        except (OSError, ValueError):  # stderr full, closed or hung up: nowhere left to say it
            pass

    def status(self, line: str | None) -> None:
        """On a terminal's stderr, `line` in place of the last status line (None clears it),
        cut to the width so that it stays one row; elsewhere nothing."""
        if not self.stderr_tty:
            return
        from rich.cells import set_cell_size

        text = "" if line is None else set_cell_size(line, max(1, self.columns() - 1)).rstrip()
        try:
            self.stderr.write("\r\x1b[K" + text)
            self.stderr.flush()
        except (OSError, ValueError):
            pass


def size_variable(environ: Mapping[str, str], name: str) -> int | None:
    """COLUMNS or LINES as a number of cells, or None when unset or not a sensible one."""
    value = environ.get(name, "")
    if value.isascii() and value.isdigit() and len(value) <= 6 and int(value) > 0:
        return int(value)
    return None


def wrap_message(line: str, width: int, indent: str = "  ") -> str:
    """`line` wrapped to `width` cells where a line may break (see `break_offsets`), a
    `command` kept whole; the lines after the first indented by `indent`."""
    from gradtutor.ui.linebreak import break_offsets, keep_ranges

    lines = []
    for rest in line.splitlines() or [""]:
        room = width
        while True:
            breaks = break_offsets(rest, room, keep_ranges(rest))
            cut = breaks[0] if breaks else len(rest)
            lines.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip()
            if not rest:
                break
            room = max(1, width - len(indent))
    return ("\n" + indent).join(lines)


class OutputLost(Exception):
    """Standard output cannot be written any more: a full disk (`> /dev/full`), a closed
    stream, a reader that went away (a broken pipe), a terminal that hung up."""

    def __init__(self, error: OSError | ValueError) -> None:
        super().__init__(str(error))
        self.errno = getattr(error, "errno", None) or errno.EBADF
        self.reason = getattr(error, "strerror", None) or str(error)


class Output:
    """Standard output, whose write errors are `OutputLost`: the error boundary tells them
    from the tutor's own file errors, and says them in one line."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as exc:  # ValueError: "I/O operation on closed file"
            raise OutputLost(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise OutputLost(exc) from exc

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding, getvalue ...
        return getattr(self._stream, name)


class _Closed:
    """A standard stream that was closed before gradtutor started."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, msg("the stream is closed"))

    def flush(self) -> None:
        raise OSError(errno.EBADF, msg("the stream is closed"))

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, msg("the stream is closed"))


class _NoTrailingSpaces:
    """A text stream passing on what Rich writes without the spaces that end its lines."""

    _PADDING = re.compile(r"[ \t]+(?=\n)")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(self._PADDING.sub("", text))
        return len(text)

    def __getattr__(self, name: str) -> object:  # flush, encoding, isatty, fileno ...
        return getattr(self._stream, name)


def _system_locale() -> str | None:
    import locale

    try:
        return locale.getlocale()[0]
    except ValueError:  # a locale Python cannot parse
        return None


def _isatty(stream: TextIO | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):
        return False
