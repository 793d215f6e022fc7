"""The summary of a graded class on screen: students by exercises, folded to the terminal's
width. Data in (`grading.StudentResult`), Rich renderables out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from gradtutor.grading import StudentResult
from gradtutor.i18n import msg
from gradtutor.ui.render import Look

NAME_WIDTH = 24  # the widest student name the summary table shows whole


def summary(results: Sequence[StudentResult], exercise_ids: Sequence[str], look: Look,
            width: int) -> list[Table | Text]:
    """A table of students by exercises (a mark per exercise, then the total), fitting
    `width` columns: exercises are numbered, a key below names them, and when they do not
    fit side by side they are folded into several tables."""
    name_width = min(NAME_WIDTH, max([cell_len(look.tr(msg("student")))]
                                     + [cell_len(r.student.name) for r in results]))
    mark = max(len(look.ok), len(look.bad), 2)
    total_width = len(f"{len(exercise_ids)}/{len(exercise_ids)}") + 1
    # Rich draws a cell's padding on both sides, and a border between cells unless plain
    room = max(1, (width - name_width - total_width - 6) // (mark + 3))
    parts: list[Table | Text] = []
    numbered = list(enumerate(exercise_ids, start=1))
    chunks = [numbered[i:i + room] for i in range(0, len(numbered), room)] or [[]]
    for n, chunk in enumerate(chunks):
        last = n == len(chunks) - 1
        table = Table(box=None if look.plain else _box(), pad_edge=False, show_edge=False)
        table.add_column(look.tr(msg("student")), no_wrap=True, overflow="ellipsis",
                         max_width=name_width)
        for number, _ in chunk:
            table.add_column(str(number), justify="center", no_wrap=True)
        if last:
            table.add_column(look.tr(msg("total")), justify="right", no_wrap=True)
        for r in results:
            cells: list[Text | str] = [r.student.name]
            index = {eid: v for eid, v in zip(exercise_ids, r.verdicts, strict=True)}
            for _, eid in chunk:
                passed = index[eid].passed
                cells.append(Text(look.ok if passed else look.bad,
                                  style="" if look.plain else ("green" if passed else "red")))
            if last:
                cells.append(f"{r.passed_count}/{r.total}")
            table.add_row(*cells)
        parts.append(table)
    key = "  ".join(f"{number} {eid}" for number, eid in numbered)
    parts.append(Text(key, style="" if look.plain else "grey50"))
    return parts


def _box() -> Any:
    from rich import box

    return box.SIMPLE_HEAD
