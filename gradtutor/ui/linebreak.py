"""Line breaking for text that mixes Chinese with English and code.

Rich breaks lines only at spaces, and folds a "word" longer than the line at any cell. Chinese
prose has no spaces, so a whole sentence reads to Rich as one long word: it is pushed to the
next line, leaving a ragged gap, then cut wherever the edge falls, even before a `，` or `。`.
Here a line may break between any two Chinese characters, never before closing punctuation or
after opening punctuation (the kinsoku rules), never inside an English word or a code span.

`break_offsets` is the pure rule. `Prose` is a Rich `Text` that wraps by it, and `ProseMarkdown`
renders paragraphs as `Prose`. Text with no double-width character is left entirely to Rich,
so English renders exactly as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.containers import Lines
from rich.markdown import Heading, Markdown, MarkdownContext, Paragraph
from rich.measure import Measurement
from rich.text import Text

# Never at the start of a line (closing brackets and quotes, pause and stop marks). Not the
# ASCII full stop: in this text it mostly starts a name, `.grad`.
CLOSING = frozenset("，。、；：？！）」』”’》〉】〕］｝〗〙…‥・ー々％,;:!?)]}%")
# Never at the end of a line.
OPENING = frozenset("（「『“‘《〈【〔［｛〖〘([{")
# Never split in two: the dash —— and the ellipsis …… are written doubled.
DOUBLED = frozenset("—…")
# Quotes that Chinese writes around words; a line may break beside them like beside a hanzi.
_CJK_QUOTES = frozenset("“”‘’")
# Markdown's marks, shown as written in the plain look: `*梯度*。` must not part from its words.
_GLUE = frozenset("*_`")
_CODE_SPAN = re.compile(r"`[^`\n]+`")


def is_wide(char: str) -> bool:
    """A character that takes two cells: hanzi, kana, hangul, full-width punctuation."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def has_wide(text: str) -> bool:
    return any(ord(c) > 0x10FF and is_wide(c) for c in text)


def _breaks_around(char: str) -> bool:
    return char in _CJK_QUOTES or (ord(char) > 0x10FF and is_wide(char))


def _opportunities(text: str, keep: Sequence[tuple[int, int]]) -> list[int]:
    """Indexes a line may begin at (besides 0), in order."""
    kept = bytearray(len(text) + 1)  # 1 where a break would split a kept range
    for start, end in keep:
        for i in range(start + 1, min(end, len(text))):
            kept[i] = 1
    found = []
    for i in range(1, len(text)):
        before, after = text[i - 1], text[i]
        if kept[i] or after.isspace():
            continue
        if before.isspace():
            found.append(i)  # after a space, as Rich breaks: the space ends the line before
        elif after in _GLUE and before in CLOSING and is_wide(before):
            found.append(i)  # after "、" or "：", before a mark that opens: `a`、`b`
        elif (after in CLOSING or before in OPENING or (before == after and after in DOUBLED)
              or before in _GLUE or after in _GLUE):
            continue
        elif _breaks_around(before) or _breaks_around(after):
            found.append(i)
    return found


def break_offsets(text: str, width: int, keep: Sequence[tuple[int, int]] = ()) -> list[int]:
    """Where to break one line of `text` (no newlines) so that no piece is wider than `width`
    cells: the indexes the second and later pieces begin at, as Rich's `divide_line` gives.

    Breaks fall after spaces and between Chinese characters, never before closing punctuation
    nor after opening punctuation, nor inside a `keep` range (start, end) such as a code
    span. A piece that cannot fit whole (a word longer than the line) is cut by cells."""
    width = max(1, width)
    cells = [0]
    for char in text:
        cells.append(cells[-1] + cell_len(char))

    def span(start: int, end: int) -> int:  # cells of text[start:end], trailing space dropped
        while end > start and text[end - 1].isspace():
            end -= 1
        return cells[end] - cells[start]

    def fold(start: int, end: int) -> int:
        """Where to cut text[start:end], a piece wider than the line: at its last space or
        hanzi that fits (a code span longer than the line has to give), else at the last
        cell that fits, moved back so that the next line does not open with punctuation."""
        inside = [i for i in loose if start < i < end and span(start, i) <= width]
        if inside:
            return inside[-1]
        cut = start + 1
        while cut < end and span(start, cut + 1) <= width:
            cut += 1
        while cut - 1 > start and text[cut] in CLOSING:
            cut -= 1
        return cut

    loose = _opportunities(text, ()) if keep else []
    breaks: list[int] = []
    line_start = 0
    fits = 0  # the furthest opportunity whose line still fits
    for place in [*_opportunities(text, keep), len(text)]:
        while span(line_start, place) > width:
            line_start = fits if fits > line_start else fold(line_start, place)
            breaks.append(line_start)
        fits = place
    return breaks


def keep_ranges(line: str, phrases: Iterable[str] = ()) -> list[tuple[int, int]]:
    """Ranges of `line` never to break: code spans written with backticks (as the plain look
    shows them), and every occurrence of `phrases` (code spans whose backticks are gone)."""
    ranges = [m.span() for m in _CODE_SPAN.finditer(line)]
    for phrase in phrases:
        start = line.find(phrase)
        while start >= 0:
            ranges.append((start, start + len(phrase)))
            start = line.find(phrase, start + len(phrase))
    return ranges


class Prose(Text):
    """A Rich `Text` that wraps Chinese between characters, by `break_offsets`. `keep` names
    phrases (code spans) never to break. Text with no double-width character wraps and
    measures exactly as a plain `Text` does."""

    def __init__(self, text: str = "", *args: Any, keep: Sequence[str] = (),
                 **kwargs: Any) -> None:
        super().__init__(text, *args, **kwargs)
        self.keep = tuple(keep)

    def wrap(self, console: Console, width: int, *, justify: Any = None, overflow: Any = None,
             tab_size: int = 8, no_wrap: bool | None = None) -> Lines:
        no_wrap = (no_wrap if no_wrap is not None else bool(self.no_wrap)) or overflow == "ignore"
        if no_wrap or not has_wide(self.plain):
            return super().wrap(console, width, justify=justify, overflow=overflow,
                                tab_size=tab_size, no_wrap=no_wrap)
        wrap_justify = justify or self.justify or "default"
        wrap_overflow = overflow or self.overflow or "fold"
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(tab_size)
            plain = line.plain
            pieces = line.divide(break_offsets(plain, width, keep_ranges(plain, self.keep)))
            for piece in pieces:
                if piece.cell_len > width:  # the space a line ends with may pass the edge
                    piece.rstrip()
            if wrap_justify:
                pieces.justify(console, width, justify=wrap_justify, overflow=wrap_overflow)
            for piece in pieces:
                piece.truncate(width, overflow=wrap_overflow)
            lines.extend(pieces)
        return lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        if not has_wide(self.plain):
            return super().__rich_measure__(console, options)
        widest = narrowest = 0
        for line in self.plain.splitlines():
            widest = max(widest, cell_len(line))
            starts = [0, *_opportunities(line, keep_ranges(line, self.keep)), len(line)]
            for start, end in zip(starts, starts[1:], strict=False):
                narrowest = max(narrowest, cell_len(line[start:end].rstrip()))
        return Measurement(narrowest, widest)


def _code_phrases(markup: str) -> tuple[str, ...]:
    """The code spans of markdown source that hold a space: Rich could break them there."""
    return tuple({m.group()[1:-1] for m in _CODE_SPAN.finditer(markup) if " " in m.group()})


class _ProseParagraph(Paragraph):
    keep: tuple[str, ...] = ()
    tail: Text | None = None  # appended to the paragraph: the last one's `ProseMarkdown.tail`

    @classmethod
    def create(cls, markdown: Markdown, token: Any) -> Paragraph:
        paragraph = cls(justify=markdown.justify or "left")
        if isinstance(markdown, ProseMarkdown):
            paragraph.keep = markdown.keep
            paragraph.tail = markdown.tail if token.map == markdown.last_paragraph else None
        return paragraph

    def on_enter(self, context: MarkdownContext) -> None:
        super().on_enter(context)
        self.text = Prose(justify="left", keep=self.keep)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Any:
        if self.tail is not None:
            self.text.append(" ")
            self.text.append_text(self.tail)
            self.tail = None
        yield from super().__rich_console__(console, options)


class _ProseHeading(Heading):
    def on_enter(self, context: MarkdownContext) -> None:
        super().on_enter(context)
        self.text = Prose(justify="left")


class ProseMarkdown(Markdown):
    """Rich's Markdown, with paragraphs and headings wrapped as `Prose`. `tail` (a marker such
    as `[EN]`) follows the text: at the end of its last paragraph when the markdown ends
    with one, else on a line of its own."""

    elements: ClassVar[dict[str, Any]] = {
        **Markdown.elements, "paragraph_open": _ProseParagraph, "heading_open": _ProseHeading,
    }

    def __init__(self, markup: str, tail: Text | None = None, **kwargs: Any) -> None:
        super().__init__(markup, **kwargs)
        self.keep = _code_phrases(markup)
        self.tail = tail
        ends_in_paragraph = bool(self.parsed) and self.parsed[-1].type == "paragraph_close"
        opening = [t for t in self.parsed if t.type == "paragraph_open" and t.level == 0]
        self.last_paragraph = opening[-1].map if ends_in_paragraph and opening else None
        self.tail_alone = tail is not None and self.last_paragraph is None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Any:
        yield from super().__rich_console__(console, options)
        if self.tail_alone and self.tail is not None:
            yield self.tail
