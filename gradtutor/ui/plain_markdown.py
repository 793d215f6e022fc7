"""Markdown for the plain look: shown as written (`code`, **bold** and list markers stay as
typed), but laid out as the fancy look lays it out. A paragraph's line breaks in the lesson
file are soft, as in Markdown: its lines are joined by a space and the paragraph wraps once,
at the screen's width, instead of keeping the file's breaks and wrapping each line again. A
list item's text wraps under its text, not under its marker. A code fence and a heading keep
their lines. Pure: Rich renderables, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from gradtutor.ui.linebreak import Prose

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"( *)([-*+]|\d{1,9}[.)])( +)(?=\S)")
_HEADING = re.compile(r" {0,3}#{1,6}(\s|$)")


class Block(NamedTuple):
    """A paragraph or list item (`marker` before its first line, the indent of the next
    ones: "" for a paragraph, "- " or "  1. " for an item), or lines shown as they are."""

    marker: str
    text: str
    verbatim: bool = False


def blocks(source: str) -> list[Block | None]:
    """The blocks of markdown source in order, None where a blank line parts two of them.
    A paragraph's or list item's lines are joined by one space, as Markdown joins them
    (by a new line after a hard break)."""
    found: list[Block | None] = []
    marker: str | None = None  # the open paragraph's or item's marker
    words: list[str] = []
    fence: list[str] | None = None  # the open code fence's lines, and how it closes
    closing = ""

    def close() -> None:
        nonlocal marker, words
        if marker is not None:
            found.append(Block(marker, "".join(words).strip()))
        marker, words = None, []

    def add(line: str) -> None:
        """A line of the open paragraph: a soft break is a space, a hard one (two spaces or
        a backslash at the end) a new line."""
        hard = line.endswith("  ") or line.endswith("\\")
        words.append(line.strip().removesuffix("\\") + ("\n" if hard else " "))

    for line in source.splitlines():
        if fence is not None:
            fence.append(line)
            if line.strip().startswith(closing) and not line.strip().strip(closing[0]):
                found.append(Block("", "\n".join(fence), verbatim=True))
                fence = None
            continue
        opening = _FENCE.match(line)
        item = _ITEM.match(line)
        if opening:
            close()
            fence, closing = [line], opening.group(1)
        elif not line.strip():
            close()
            if found and found[-1] is not None:
                found.append(None)
        elif item:
            close()
            marker = item.group(0)
            add(line[item.end():])
        elif _HEADING.match(line):
            close()
            found.append(Block("", line.strip(), verbatim=True))
        else:
            if marker is None:
                marker = _item_indent(found, line)
            add(line)
    if fence is not None:  # a fence left open runs to the end, as Markdown reads it
        found.append(Block("", "\n".join(fence), verbatim=True))
    close()
    while found and found[-1] is None:
        found.pop()
    return found


def _item_indent(found: list[Block | None], line: str) -> str:
    """The indent of a paragraph that starts at `line`: a list item's, when it follows the
    item after a blank line and is indented under its text (the item's second paragraph)."""
    if len(found) < 2 or found[-1] is not None:
        return ""
    item = found[-2]
    width = cell_len(item.marker) if item is not None else 0
    indented = len(line) - len(line.lstrip(" ")) >= width > 0
    return " " * width if indented else ""


class Hanging:
    """`text` after `marker`, its wrapped lines indented under its first (a list item)."""

    def __init__(self, marker: str, text: Text) -> None:
        self.marker = marker
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = cell_len(self.marker)
        width = max(1, options.max_width - indent)
        lines = console.render_lines(self.text, options.update(width=width), pad=False)
        for number, line in enumerate(lines):
            yield Segment(self.marker if number == 0 else " " * indent)
            yield from line
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        indent = cell_len(self.marker)
        inner = Measurement.get(console, options, self.text)
        return Measurement(inner.minimum + indent, inner.maximum + indent)


class PlainMarkdown:
    """Markdown source laid out by `blocks`: each paragraph and list item wraps as `Prose`
    (Chinese between characters); `tail` (such as `[EN]`) follows the last of them, or
    stands on a line of its own after a code fence."""

    def __init__(self, source: str, tail: Text | None = None) -> None:
        self.blocks = blocks(source)
        self.tail = tail

    def _texts(self) -> Iterable[Text | Hanging]:
        last = len(self.blocks) - 1
        for index, block in enumerate(self.blocks):
            if block is None:
                yield Text("")
                continue
            text: Text = Prose(block.text)
            tail = self.tail if index == last else None
            if tail is not None and not block.verbatim:
                text.append(" ")
                text.append_text(tail)
            yield Hanging(block.marker, text) if block.marker else text
            if tail is not None and block.verbatim:
                yield tail
        if self.tail is not None and last < 0:
            yield self.tail

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self._texts()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        measures = [Measurement.get(console, options, part) for part in self._texts()]
        if not measures:
            return Measurement(0, 0)
        return Measurement(max(m.minimum for m in measures), max(m.maximum for m in measures))
