"""The walkthrough on a terminal: the alternate screen, the header pinned at the top, the key
legend at the foot, and the step's body in a viewport between them that scrolls.

The arithmetic of what shows is `gradtutor.ui.viewport`'s; this module only lays the
rendered lines out and writes them. A step opens at its top; when something new appears on
the same step (a verdict, a hint, a prediction's result), the screen's focus (what matters
most), or else the changed lines, is scrolled into view. A resize keeps the text that was at
the top, and a focus that was in view stays in view; closing the help returns to the place
the reader left.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.control import Control
from rich.segment import ControlType, Segment
from rich.text import Text

from gradtutor.bindings import TABLES, Kind, ViewAction, shown_keys
from gradtutor.i18n import msg
from gradtutor.ui import viewport
from gradtutor.ui.render import MAX_WIDTH, Look, key_text
from gradtutor.ui.screen import Screen

Lines = list[list[Segment]]
_ERASE_LINE = Control((ControlType.ERASE_IN_LINE, 0)).segment
# The smallest window the tutor lays a screen out in (README: "from 60x20 up"); in a smaller
# one it shows a line that says so instead, and keys wait until the window grows.
MIN_COLUMNS, MIN_ROWS = 60, 20
# xterm's "alternate scroll": in the alternate screen the mouse wheel sends ↑ and ↓, which
# scroll the body; unlike mouse reporting, it leaves selecting text with the mouse alone.
_WHEEL_ON, _WHEEL_OFF = "\x1b[?1007h", "\x1b[?1007l"


class _Rows:
    """Rendered lines, written from the top-left corner: each erases what an earlier frame
    left to its right (unless it fills the row), and none ends in a newline that would
    scroll the screen."""

    def __init__(self, lines: Lines, columns: int, clear: bool) -> None:
        self.lines = lines
        self.columns = columns
        self.clear = clear

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.clear:
            yield Control((ControlType.CLEAR,)).segment
        yield Control.home().segment
        for n, line in enumerate(self.lines):
            yield from line
            if Segment.get_line_length(line) < self.columns:
                yield _ERASE_LINE
            if n + 1 < len(self.lines):
                yield Segment("\r\n")


class FullScreen:
    """Draws screens into the whole terminal and keeps the reader's place.

    `size` answers the terminal's (columns, rows) at the moment it is asked."""

    def __init__(self, console: Console, size: Callable[[], tuple[int, int]],
                 look: Look) -> None:
        self.console = console
        self.size = size
        self.look = look
        self.place = viewport.Place()
        self.behind = viewport.Place()  # the place on the page before this one
        self.focus_seen = False  # the screen's focus was in view in the last frame
        self.screen: Screen | None = None
        self.body: list[str] = []  # the body's lines as text, to see what changed
        self.starts: list[int] = []
        self.rows = 0
        self.clear = True
        self.last_size = (0, 0)

    # --- entering and leaving ---------------------------------------------------------

    def enter(self) -> None:
        self.console.set_alt_screen(True)
        self.console.show_cursor(False)
        self._raw(_WHEEL_ON)
        self.clear = True

    def leave(self) -> None:
        self._raw(_WHEEL_OFF)
        self.console.show_cursor(True)
        self.console.set_alt_screen(False)

    def _raw(self, text: str) -> None:
        if self.console.is_terminal:
            self.console.file.write(text)
            self.console.file.flush()

    def keep(self) -> tuple[viewport.Place, viewport.Place, object]:
        """The reader's place, to be given back by `restore` after pages drawn over it."""
        return self.place, self.behind, self.screen

    def restore(self, kept: tuple[viewport.Place, viewport.Place, object]) -> None:
        self.place, self.behind, screen = kept
        self.screen = screen if isinstance(screen, Screen) else self.screen

    # --- drawing ----------------------------------------------------------------------

    def show(self, screen: Screen, follow: bool) -> None:
        """Draw `screen`. A new page opens at its top; on the same page, with `follow`, what
        changed is scrolled into view."""
        self.screen = screen
        self._draw(follow=follow)

    def resized(self) -> bool:
        """Draw again if the terminal's size changed since the last frame."""
        if self.screen is None or self.size() == self.last_size:
            return False
        self.clear = True
        self._draw(follow=False)
        return True

    def too_small(self) -> bool:
        """The window is smaller than the tutor's screens can be laid out in."""
        columns, rows = self.size()
        return columns < MIN_COLUMNS or rows < MIN_ROWS

    def scroll(self, action: ViewAction) -> None:
        total = len(self.body)
        offset = self.place.offset(self.starts, total)
        new = viewport.scroll(action, total, self.rows, offset)
        self.place = viewport.place_at(new, self.starts, total, self.place.seen)
        self.focus_seen = False  # the reader moved: the focus no longer holds the screen
        self._draw(follow=False)

    def at_end(self) -> bool:
        """The end of the body is on screen."""
        return viewport.at_end(len(self.body), self.rows,
                               self.place.offset(self.starts, len(self.body)))

    def _draw(self, follow: bool) -> None:
        screen = self.screen
        if screen is None:
            return
        columns, rows = self.size()
        self.last_size = (columns, rows)
        if columns < MIN_COLUMNS or rows < MIN_ROWS:
            self._draw_too_small(columns, rows)
            return
        width = max(20, min(columns, MAX_WIDTH))
        self.console.width = width
        options = self.console.options.update_width(width)
        render = self.console.render_lines

        head = render(screen.header, options, pad=False)
        starts: list[int] = []
        body: Lines = []
        for part in screen.parts:
            starts.append(len(body))
            body += render(part, options, pad=False)
        foot = render(screen.footer(scrollable=False), options, pad=False)
        if len(head) + len(body) + len(foot) > rows:
            foot = render(screen.footer(scrollable=True), options, pad=False)
        while head and len(head) + len(foot) >= rows:  # a tiny terminal: the header yields
            head = head[:-1]
        space = max(1, rows - len(head) - len(foot))
        text = ["".join(s.text for s in line).rstrip() for line in body]
        focus = _lines(screen.focus, starts, len(text))
        offset = self._offset(screen.page, text, starts, space, follow, focus)
        self.body, self.starts, self.rows = text, starts, space
        self.focus_seen = focus is not None and viewport.in_view(*focus, len(text), space,
                                                                  offset)

        shown = viewport.window(len(body), space, offset)
        middle: Lines = []
        if shown.above:
            middle += render(self._marker(screen.kind, shown.above, up=True), options,
                             pad=False)
        middle += body[shown.start:shown.end]
        if shown.below:
            middle += render(self._marker(screen.kind, shown.below, up=False), options,
                             pad=False)
        middle += [[] for _ in range(space - len(middle))]
        frame = head + middle + foot
        self.console.print(_Rows(frame[:rows], columns, self.clear), end="", crop=False,
                           soft_wrap=True)
        self.console.file.flush()
        self.clear = False

    def _draw_too_small(self, columns: int, rows: int) -> None:
        """In place of the screen, the one line that says what size it needs (wrapped only
        where the window is narrower than the line); the screen comes back as it was when
        the window grows."""
        words = msg("Make the window at least {need} (it is {size}); q quits.",
                    need=f"{MIN_COLUMNS}x{MIN_ROWS}", size=f"{columns}x{rows}")
        self.console.width = max(1, columns)
        lines = self.console.render_lines(
            Text(self.look.tr(words), style="" if self.look.plain else "bold"),
            self.console.options.update_width(max(1, columns)), pad=False)
        self.console.print(_Rows(lines[:max(1, rows)], columns, True), end="", crop=False,
                           soft_wrap=True)
        self.console.file.flush()
        self.clear = True  # the screen, when it comes back, is drawn on a clean window

    def _offset(self, page: object, text: list[str], starts: list[int], space: int,
                follow: bool, focus: tuple[int, int] | None) -> int:
        """The first body line of this frame; it updates the reader's place where the reader
        did not put it (a new page, or something new brought into view). A place only
        clamped to a short body stays as it was, so a resize there and back keeps it."""
        total = len(text)
        if page != self.place.seen:
            # a new page opens at its top, except the one just left (the step under `?`)
            self.behind, self.place = self.place, (
                self.behind if page == self.behind.seen else viewport.Place(seen=page))
            offset = viewport.settle(self.place.offset(starts, total), total, space, None,
                                     False)
        elif not follow:
            offset = viewport.settle(self.place.offset(starts, total), total, space, focus,
                                     self.focus_seen)
        else:
            offset = self.place.offset(starts, total)
            first, last = focus if focus is not None else changed(self.body, text)
            if first >= last:
                return viewport.settle(offset, total, space, None, False)
            offset = viewport.reveal(first, last, total, space, offset)
        if offset != viewport.settle(self.place.offset(starts, total), total, space, None,
                                     False):
            self.place = viewport.place_at(offset, starts, total, page)
        return offset

    def _marker(self, kind: Kind, count: int, up: bool) -> Text:
        """The row that stands for `count` lines out of view, and the keys that bring them."""
        keys = [b for b in TABLES[kind]
                if b.action in (("page-up", "line-up") if up else ("page-down", "line-down"))]
        names = [key_text(k, self.look) for b in keys for k in shown_keys(b, True, quiet=True)]
        arrow = ("^" if up else "v") if self.look.plain else ("▲" if up else "▼")
        words = (msg("{count} more lines above: {keys}", count=count, keys=", ".join(names))
                 if up else
                 msg("{count} more lines below: {keys}", count=count, keys=", ".join(names)))
        return Text(f"{arrow} {self.look.tr(words)}", style="" if self.look.plain else "reverse",
                    no_wrap=True, overflow="ellipsis")  # one row, however narrow


def changed(old: list[str], new: list[str]) -> tuple[int, int]:
    """The lines [first, last) of `new` that differ from `old`: what is left once the lines
    both share at the start and at the end are set aside."""
    first = 0
    while first < min(len(old), len(new)) and old[first] == new[first]:
        first += 1
    tail = 0
    while (tail < min(len(old), len(new)) - first
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1
    return first, len(new) - tail


def _lines(parts: tuple[int, int] | None, starts: list[int], total: int
           ) -> tuple[int, int] | None:
    """The body lines [first, last) of the parts [first, last), if any."""
    if parts is None or not starts:
        return None
    first, last = parts
    return starts[first], (starts[last] if last < len(starts) else total)
