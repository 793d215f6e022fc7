"""Which lines of a step's body a terminal of a given height shows: the window's arithmetic,
pure, and the reader's place in it (`Place`), which the full-screen shell keeps.

The body scrolls between a header pinned at the top and the legend pinned at the foot. When
the body is taller than the rows left for it, a marker row says how much more there is above
or below; a marker takes the place of a body row.
"""

from __future__ import annotations

from gradtutor.bindings import ViewAction
from gradtutor.records import record


@record
class Window:
    """Body lines [start, end) are on screen; `above` and `below` lines are not, and each
    that is not 0 has a marker row (in fewer than 3 rows there is no room for markers, and
    both are 0)."""

    start: int
    end: int
    above: int
    below: int


def max_offset(total: int, rows: int) -> int:
    """The largest first line that still fills the rows (the last line then shows)."""
    if total <= rows:
        return 0
    if rows < 3:
        return total - max(1, rows)
    return total - (rows - 1)  # the top marker takes a row at the end


def window(total: int, rows: int, offset: int) -> Window:
    """The lines shown for a body of `total` lines in `rows` rows, from line `offset`."""
    rows = max(1, rows)
    if total <= rows:
        return Window(0, total, 0, 0)
    offset = max(0, min(offset, max_offset(total, rows)))
    if rows < 3:  # no room for markers: lines only
        return Window(offset, min(total, offset + rows), 0, 0)
    space = rows - (1 if offset else 0)  # the marker for the lines above
    if offset + space >= total:
        return Window(offset, total, offset, 0)
    space = max(1, space - 1)  # the marker for the lines below
    return Window(offset, offset + space, offset, total - offset - space)


def page(total: int, rows: int, offset: int) -> int:
    """How far a page moves: the lines on view, less one kept for context."""
    shown = window(total, rows, offset)
    return max(1, shown.end - shown.start - 1)


def scroll(action: ViewAction, total: int, rows: int, offset: int) -> int:
    """The first line after `action` ("page-or-next" moves as "page-down" does)."""
    if action == "top":
        new = 0
    elif action == "bottom":
        new = max_offset(total, rows)
    elif action == "line-up":
        new = offset - 1
    elif action == "line-down":
        new = offset + 1
    elif action == "page-up":
        new = offset - page(total, rows, max(0, offset - page(total, rows, offset)))
    else:
        new = offset + page(total, rows, offset)
    return max(0, min(new, max_offset(total, rows)))


def at_end(total: int, rows: int, offset: int) -> bool:
    """The last line is on screen."""
    return window(total, rows, offset).below == 0


def reveal(start: int, end: int, total: int, rows: int, offset: int) -> int:
    """The first line that brings lines [start, end) into view with the least movement;
    when they cannot all fit, their first line comes to the top."""
    shown = window(total, rows, offset)
    if shown.start <= start and end <= shown.end:
        return shown.start
    if start < shown.start:
        return min(start, max_offset(total, rows))
    new, limit = shown.start, min(start, max_offset(total, rows))
    while new < limit and window(total, rows, new).end < end:
        new += 1
    return new


def in_view(start: int, end: int, total: int, rows: int, offset: int) -> bool:
    """Lines [start, end) are all on screen (or, when they cannot all fit, the first rows'
    worth of them is)."""
    shown = window(total, rows, offset)
    return shown.start <= start < shown.end and (end <= shown.end or start == shown.start)


def settle(offset: int, total: int, rows: int, focus: tuple[int, int] | None,
           keep_focus: bool) -> int:
    """The first line to show for a reader at `offset`: their place, within the body, and
    with `keep_focus` the lines [focus) brought into view with the least movement."""
    offset = max(0, min(offset, max_offset(total, rows)))
    if focus is None or not keep_focus:
        return offset
    return reveal(focus[0], focus[1], total, rows, offset)


@record
class Place:
    """Where the reader is: the body line at the top, kept as the part of the body it falls
    in and how far into that part, so a resize that re-wraps the text keeps the same text
    at the top. `seen` names the page (step, question, help) the place belongs to: another
    page opens at its top."""

    part: int = 0
    into: float = 0.0
    seen: object = None

    def offset(self, starts: list[int], total: int) -> int:
        """The first body line for parts beginning at `starts` (and a body of `total`)."""
        if not starts:
            return 0
        part = min(self.part, len(starts) - 1)
        end = starts[part + 1] if part + 1 < len(starts) else total
        return starts[part] + round(self.into * (end - starts[part]))


def place_at(offset: int, starts: list[int], total: int, seen: object) -> Place:
    """The Place of body line `offset`, for parts beginning at `starts`."""
    part = max((i for i, s in enumerate(starts) if s <= offset), default=0)
    end = starts[part + 1] if part + 1 < len(starts) else total
    size = max(1, end - starts[part]) if starts else 1
    into = (offset - starts[part]) / size if starts else 0.0
    return Place(part, into, seen)
