"""A line chart of a few series of numbers, drawn with text: the loss curves of a demo.

Curves share one pair of axes, so a learner sees where they start together and where they
part. Each curve has its own marker, so the chart reads without colour; the plain look uses
ASCII only. Values that are not finite (an exploding loss) are left out and said so.
Pure: builds Rich renderables and never prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.constrain import Constrain
from rich.text import Text

from gradtutor.i18n import msg
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, english_mark, tagged

HEIGHT = 11  # rows of the plot area: odd, so the middle row has a tick of its own
_MARKERS = {False: ("●", "×", "▲", "■", "+"), True: ("o", "x", "^", "#", "+")}
_OVERLAP = {False: "◆", True: "@"}
_COLOURS = ("green", "red", "cyan", "magenta", "yellow")


def line_chart(series: Sequence[tuple[str, Sequence[float]]], *, title: str, x_label: str,
               y_label: str, width: int, look: Look) -> RenderableType:
    """`series` as (name, values) pairs drawn over steps 1, 2, ...; no line wider than `width`.

    The y axis starts at 0 when no value is negative, so a falling loss looks as far from
    zero as it is. Lesson text (title, labels) shown in English for want of a translation
    is tagged `[EN]`."""
    finite = [v for _, values in series for v in values if math.isfinite(v)]
    head: list[RenderableType] = [tagged(Prose(title, style="" if look.plain else "bold"),
                                         title, look)]
    if not finite:
        body: list[RenderableType] = [Prose(look.tr(msg("(no finite values to draw)")),
                                            style="italic")]
        return Constrain(Group(*head, *body, *_notes(series, look)), width)
    low = 0.0 if min(finite) >= 0 else min(finite)
    high = max(finite)
    if high == low:
        high = low + 1.0
    labels = {row: _number(_between(low, high, 1 - row / (HEIGHT - 1)))
              for row in (0, (HEIGHT - 1) // 2, HEIGHT - 1)}
    label_width = max(len(label) for label in labels.values())
    plot_width = max(10, width - label_width - 2)
    steps = max(len(values) for _, values in series)
    grid: list[list[set[int]]] = [[set() for _ in range(plot_width)] for _ in range(HEIGHT)]
    for k, (_, values) in enumerate(series):
        for i, value in enumerate(values):
            if math.isfinite(value):
                grid[_row(value, low, high)][_column(i, steps, plot_width)].add(k)
    axis = "grey50"
    lines: list[RenderableType] = [tagged(Prose(y_label, style="" if look.plain else axis),
                                          y_label, look)]
    overlap = False
    for row, cells in enumerate(grid):
        line = Text(no_wrap=True, overflow="crop")
        line.append(labels.get(row, "").rjust(label_width) + " ", style="" if look.plain else axis)
        tick = row in labels
        line.append(("+" if tick else "|") if look.plain else ("┤" if tick else "│"),
                    style="" if look.plain else axis)
        for cell in cells:
            overlap |= len(cell) > 1
            line.append(*_cell(cell, look))
        line.rstrip()
        lines.append(line)
    lines.append(Text(" " * (label_width + 1)
                      + ("+" + "-" * plot_width if look.plain else "└" + "─" * plot_width),
                      style="" if look.plain else axis, no_wrap=True, overflow="crop"))
    mark = english_mark(x_label, look)
    shown_x = x_label if mark is None else f"{x_label} {mark.plain}"
    lines.append(Text(_x_axis(steps, shown_x, label_width + 2, plot_width), no_wrap=True,
                      overflow="crop", style="" if look.plain else axis))
    return Constrain(Group(*head, *lines, *_legend(series, overlap, look, width),
                           *_notes(series, look)), width)


def _between(low: float, high: float, fraction: float) -> float:
    # written so that it never overflows, even between -1e308 and 1e308
    return low * (1 - fraction) + high * fraction


def _row(value: float, low: float, high: float) -> int:
    """The plot row of `value`: 0 at `high`, HEIGHT - 1 at `low`."""
    fraction = (value / 2 - low / 2) / (high / 2 - low / 2)  # halves: no overflow
    return min(HEIGHT - 1, max(0, round((1 - fraction) * (HEIGHT - 1))))


def _column(index: int, steps: int, plot_width: int) -> int:
    if steps <= 1:
        return 0
    return round(index * (plot_width - 1) / (steps - 1))


def _number(value: float) -> str:
    text = f"{value:.3g}"
    return "0" if text == "-0" else text


def _cell(cell: set[int], look: Look) -> tuple[str, str]:
    """The character for one cell of the plot and its style."""
    if not cell:
        return " ", ""
    if len(cell) > 1:
        return _OVERLAP[look.plain], "" if look.plain else "bold"
    (k,) = cell
    markers = _MARKERS[look.plain]
    return markers[k % len(markers)], "" if look.plain else _COLOURS[k % len(_COLOURS)]


def _x_axis(steps: int, x_label: str, indent: int, plot_width: int) -> str:
    """`1        step        30` under the plot: the first and last step, the label between."""
    first, last = "1", str(max(steps, 1))
    room = plot_width - len(first) - len(last)
    middle = f" {x_label} " if cell_len(x_label) + 2 <= room else ""
    left = (room - cell_len(middle)) // 2
    return (" " * indent + first + " " * left + middle
            + " " * (room - left - cell_len(middle)) + last).rstrip()


def _legend(series: Sequence[tuple[str, Sequence[float]]], overlap: bool, look: Look,
            width: int) -> list[RenderableType]:
    """`● name   × name   ◆ both`, broken between entries, never inside one, to fit `width`."""
    markers = _MARKERS[look.plain]
    entries = [Text.assemble((markers[k % len(markers)],
                              "" if look.plain else _COLOURS[k % len(_COLOURS)]), f" {name}")
               for k, (name, _) in enumerate(series)]
    if overlap:
        both = msg("both") if len(series) == 2 else msg("more than one")
        entries.append(Text.assemble((_OVERLAP[look.plain], "" if look.plain else "bold"),
                                     " " + look.tr(both)))
    lines: list[RenderableType] = []
    line = Text()
    for entry in entries:
        if line.plain and cell_len(line.plain) + 3 + cell_len(entry.plain) > width:
            lines.append(line)
            line = Text()
        if line.plain:
            line.append("   ")
        line.append_text(entry)
    lines.append(line)
    return lines


def _notes(series: Sequence[tuple[str, Sequence[float]]], look: Look) -> list[RenderableType]:
    """One line per series with values that could not be drawn: how many, what, from when."""
    notes: list[RenderableType] = []
    for name, values in series:
        bad = [(i, v) for i, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            kinds = ", ".join(sorted({"nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
                                      for _, v in bad}))
            fields = {"name": name, "count": len(bad), "kinds": kinds, "step": bad[0][0] + 1}
            note = (msg("{name}: {count} value not drawn ({kinds}), the first at step {step}",
                        **fields) if len(bad) == 1 else
                    msg("{name}: {count} values not drawn ({kinds}), the first at step {step}",
                        **fields))
            notes.append(Prose(look.tr(note), style="italic"))
    return notes
