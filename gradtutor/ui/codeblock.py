"""Code laid out for the width it is given: a line too long for the screen continues on the
next row under its own indentation, behind a continuation mark, never back at column 0 where
it would read as a new statement.

`fold_code_line` is the pure rule; `CodeBlock` is the Rich renderable that applies it at
whatever width it is drawn, so the same block re-lays out at 60 columns and at 100.
"""

from __future__ import annotations

import re
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.errors import StyleSyntaxError
from rich.measure import Measurement
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text

from gradtutor.ui.linebreak import break_offsets, is_wide

MARK_FANCY = "↪"
MARK_PLAIN = ">"  # the shell's own continuation prompt: readable in any terminal's font
HANG = 2  # cells a continuation row sits right of its line's indentation, before the mark
MIN_PIECE = 12  # cells of code a continuation row keeps, however deep the indentation
TAB_SIZE = 4
_COMMENT_START = re.compile(r"#\s*\S")  # a comment's mark and its first character
_TRAILING_COMMENT = re.compile(r"\S\s+#")  # a comment after code on the same line


_COLOURS_KEY = "python colours\0"  # the lesson cache's entries for code, apart from lessons'


def highlighted(code: str) -> Text:
    """`code` coloured as Python. Pygments' Python lexer compiles its patterns when it is
    first made, some 20-30 ms of a first slide, so the colours of each block are kept in the
    lesson cache, keyed by the code and gradtutor's version, as plain data: the text, and
    each span's style as Rich writes it."""
    from gradtutor.lessons import cache

    text = _text_of(cache.get(_COLOURS_KEY + code), code)
    if text is None:
        syntax = Syntax(code, "python", theme="ansi_dark", background_color="default")
        text = syntax.highlight(code)
        cache.put(_COLOURS_KEY + code, {
            "text": text.plain, "style": str(text.style),
            "spans": [[span.start, span.end, str(span.style), isinstance(span.style, Style)]
                      for span in text.spans]})
    return text


def _text_of(data: Any, code: str) -> Text | None:
    """The coloured text kept as `data` for `code`; None for anything else (a damaged or
    foreign entry is a miss)."""
    try:
        plain, spans = data["text"], data["spans"]
        if not isinstance(plain, str) or plain.rstrip("\n") != code:
            return None
        return Text(plain, style=Style.parse(data["style"]), spans=[
            Span(int(start), int(end), Style.parse(style) if parsed else str(style))
            for start, end, style, parsed in spans])
    except (TypeError, KeyError, ValueError, StyleSyntaxError):
        return None


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def fold_code_line(line: str, width: int, mark: str) -> tuple[int, list[int]]:
    """How one line of code (no newline, tabs expanded) fits rows of `width` cells: the cells
    of space before the mark on each continuation row, and the indexes at which the second
    and later pieces begin (empty when the line fits).

    A continuation row is that space, the mark and one space, then its piece; it sits
    `HANG` cells right of the line's own indentation while that leaves room for code."""
    width = max(1, width)
    if cell_len(line) <= width:
        return 0, []
    indent = indentation(line)
    mark_cells = cell_len(mark) + 1
    lead = max(0, min(indent + HANG, width - mark_cells - min(MIN_PIECE, max(1, width // 2))))
    room, start, offsets = width, 0, []
    while cell_len(line[start:]) > room:
        start += _first_break(line[start:], room, indent if start == 0 else 0)
        offsets.append(start)
        room = max(1, width - lead - mark_cells)
    return lead, offsets


def _first_break(code: str, width: int, indent: int) -> int:
    """Where the first row of `code`, wider than `width`, ends: before a comment that follows
    code, so the comment reads whole on the rows below; else after a space or between
    Chinese characters where one fits, never inside the `indent` nor between a comment's
    `#` and its words; failing those, after an opening bracket or a comma, or before the dot
    of a chained call (`).mean()`), so that a long call breaks between its parts; failing
    all, where the edge falls."""
    keep = [m.span() for m in _COMMENT_START.finditer(code)]
    if indent:
        keep.append((0, indent + 1))
    cut = break_offsets(code, width, keep)[0]
    comment = _TRAILING_COMMENT.search(code, indent)
    if comment is not None and comment.end() - 1 < cut:  # the comment moves down whole
        return comment.end() - 1
    before, after = code[cut - 1], code[cut]
    if before.isspace() or is_wide(before) or is_wide(after):
        return cut
    soft = [i for i in range(indent + 1, cut)
            if code[i - 1] in "([{," or (code[i] == "." and code[i - 1] in ")]")]
    return soft[-1] if soft else cut


class CodeBlock:
    """Python code, highlighted unless `plain`, whose long lines continue behind a mark
    (`↪`, or `>` when plain) instead of wrapping to column 0."""

    def __init__(self, code: str, plain: bool) -> None:
        self.code = code.expandtabs(TAB_SIZE).rstrip()
        self.plain = plain

    @property
    def mark(self) -> str:
        return MARK_PLAIN if self.plain else MARK_FANCY

    def _lines(self) -> list[Text]:
        text = Text(self.code) if self.plain else highlighted(self.code)
        text.rstrip()  # the highlighter ends the code with a newline
        lines = list(text.split("\n", allow_blank=True))
        for line in lines:
            line.rstrip()
        return lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(line.rstrip()) for line in self.code.splitlines()), default=0)
        return Measurement(min(widest, MIN_PIECE + HANG + 2), widest).clamp(
            max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        mark_style = "" if self.plain else "grey50"
        rows: list[Text] = []
        for line in self._lines():
            lead, offsets = fold_code_line(line.plain, width, self.mark)
            pieces = line.divide(offsets)
            rows.append(pieces[0])
            for piece in pieces[1:]:
                row = Text(" " * lead)
                row.append(self.mark, style=mark_style)
                row.append(" ")
                row.append_text(piece)
                rows.append(row)
        for row in rows:
            row.rstrip()
            row.truncate(width, overflow="crop")
            row.no_wrap = True
            yield row
