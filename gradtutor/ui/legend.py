"""The key legend and the `?` help of a screen, both made from its table of bindings
(`gradtutor.bindings`), so neither can name a key the handler ignores. Pure renderables.

The legend takes one line: when the full line is too wide it writes each entry's first key
only, then leaves out the entries the help still lists, least needed first. Only when even
the needed ones cannot fit (a very narrow terminal) does it take a second line.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor.bindings import KINDS, TABLES, Kind, shown_keys
from gradtutor.i18n import msg
from gradtutor.records import record
from gradtutor.ui import render
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look


@record
class Entry:
    """One legend entry: its keys (all, and the first alone) and its word."""

    keys: tuple[str, ...]
    label: str
    priority: int


def entries(kind: Kind, keys: bool, choices: int = 0,
            scrollable: bool = False) -> list[Entry]:
    """The legend's entries for a screen of `kind`, in the table's order; bindings that share
    a word share an entry. Scrolling appears only when the body is `scrollable`."""
    merged: dict[str, Entry] = {}
    for binding in TABLES[kind]:
        if not binding.legend or (binding.scroll and not scrollable):
            continue
        names = tuple(shown_keys(binding, keys, choices, quiet=True))
        if not keys:  # a typed word's other spellings ("next" for n) are for the help
            names = names[:1]
        if not names:
            continue
        old = merged.get(binding.label)
        if old is None:
            merged[binding.label] = Entry(names, binding.label, binding.legend)
        else:
            both = tuple(dict.fromkeys(old.keys + names))
            merged[binding.label] = Entry(both, old.label, min(old.priority, binding.legend))
    return list(merged.values())


class Legend:
    """The key legend of a screen, fitted to the width it is drawn at."""

    def __init__(self, items: list[Entry], look: Look) -> None:
        self.items = items
        self.look = look

    def choose(self, width: int) -> list[tuple[str, str]]:
        """(keys, word) pairs that fit `width` on one line, if any way of writing them does."""
        full = [("/".join(e.keys), e.label, e.priority) for e in self.items]
        short = [(e.keys[0], e.label, e.priority) for e in self.items]
        for candidate in (full, short):
            if self._width(candidate) <= width:
                return [(k, w) for k, w, _ in candidate]
        kept = list(short)
        for worst in (3, 2):
            while any(p == worst for _, _, p in kept):
                drop = max(i for i, (_, _, p) in enumerate(kept) if p == worst)
                del kept[drop]
                if self._width(kept) <= width:
                    return [(k, w) for k, w, _ in kept]
        return [(k, w) for k, w, _ in kept]

    def _width(self, pairs: list[tuple[str, str, int]]) -> int:
        words = ["".join(render.legend_entry(k, w, self.look)) for k, w, _ in pairs]
        return sum(cell_len(w) for w in words) + 3 * max(0, len(words) - 1)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield render.legend(self.choose(options.max_width), self.look)


_KEY_COLUMN = 16  # cells


def help_body(kind: Kind, keys: bool, look: Look, choices: int = 0) -> RenderableType:
    """The keys of a screen of `kind` and what each does, one binding to a row; a long
    description wraps under itself, never under the keys."""
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(no_wrap=True, min_width=_KEY_COLUMN)
    grid.add_column(ratio=1)
    for binding in TABLES[kind]:
        names = [n for n in shown_keys(binding, keys, choices) if n != "wheel"]
        if names:
            grid.add_row(Text(", ".join(render.key_text(n, look) for n in names), style="bold"),
                         Prose(look.tr(binding.help)))
    saved = msg("Progress is saved at every step; `gradtutor start` resumes.")
    return Group(Prose(look.tr(msg("Keys")), style="bold"), Text(""),
                 Padding(grid, (0, 0, 0, 2)), Text(""), Prose(look.tr(saved)))



_KIND_TITLES: dict[Kind, str] = {
    "slide": "Slides, demos and answered predictions",
    "exercise": "Exercises",
    "confirm": "Asked whether to show the solution",
    "predict": "Predictions",
    "parsons": "Ordering the loop",
    "ordered": "Ordering the loop, once the order is right",
    "question": "Quiz questions",
    "feedback": "Quiz feedback",
    "score": "The quiz score",
    "help": "The help",
    "asking": "Typing a question (after `a`; every key types but these)",
    "answer": "The answer to a question",
    "answer-only": "The answer, when it cites no step of the lesson you are in",
}


def key_reference() -> str:
    """docs/using.md's list of keys, made from the tables (in English, as the guide is)."""
    out = []
    for kind in KINDS:
        rows = []
        for binding in TABLES[kind]:
            names = [n for n in shown_keys(binding, True) if n != "wheel"]
            if names:
                rows.append(" ".join(f"`{n}`" for n in names) + " " + binding.help)
        out.append(f"- **{_KIND_TITLES[kind]}**: " + "; ".join(rows) + ".")
    return "\n".join(out) + "\n"
