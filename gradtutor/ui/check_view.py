"""A Verdict as Rich renderables: each check with a symbol and a word, its evidence, and the
learner's own output with control sequences made harmless. Pure: nothing here prints.

Every word is said by `look.tr`; the checks' messages, hints and evidence are messages
(`msg()`) too, so a learner reading Chinese sees no English feedback line."""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor.checking.verdict import Check, Verdict, say
from gradtutor.i18n import msg
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, inline
from gradtutor.ui.safe_text import neutralise_verdict

_WORDS = {"pass": msg("passed"), "fail": msg("failed"), "error": msg("error"),
          "timeout": msg("timed out"), "skip": msg("not run")}
_TITLES = {"pass": msg("Passed"), "fail": msg("Not yet"),
           "error": msg("Your code did not run to the end"), "timeout": msg("Timed out")}


def _symbol(status: str, look: Look) -> tuple[str, str]:
    if status == "pass":
        return look.ok, "green"
    if status == "skip":
        return "-", "grey50"
    return look.bad, "red" if status == "fail" else "yellow"


def check_line(check: Check, look: Look) -> RenderableType:
    tr = look.tr
    symbol, style = _symbol(check.status, look)
    heading = tr(msg("{name}: {status}", name=check.name, status=_WORDS[check.status]))
    parts: list[RenderableType] = [Prose(f"{symbol} {heading}", style=f"bold {style}")]
    if check.status != "pass" or look.plain:
        # a traceback keeps its lines; prose flows and highlights its `code`
        message = say(tr, check.message)
        body = Prose(message) if "\n" in message.strip() else inline(message, look)
        parts.append(Padding(body, (0, 0, 0, 2)))
    if check.evidence is not None:
        columns = tuple(say(tr, column) for column in check.evidence.columns)
        rows = tuple(tuple(say(tr, cell) for cell in row)
                     for row in check.evidence.failing_first())
        parts.append(Padding(Evidence(columns, rows, look.plain), (0, 0, 0, 2)))
    if check.help and check.status != "pass":
        # the label carries its own spacing: "hint: " in English, none after "：" in Chinese
        parts.append(Padding(Prose.assemble((tr(msg("hint: ")), "bold"),
                                           inline(say(tr, check.help), look)), (0, 0, 0, 2)))
    if check.note:
        parts.append(Padding(Prose.assemble((tr(msg("note: ")), "bold"),
                                           inline(say(tr, check.note), look)), (0, 0, 0, 2)))
    return Group(*parts)


def skipped_line(checks: list[Check], look: Look) -> RenderableType:
    """Several checks not run for the same reason, as one line (wrapping under itself):
    their names, then why."""
    names = ", ".join(check.name for check in checks)
    line = look.tr(msg("{names}: not run ({why})", names=names,
                       why=say(look.tr, checks[0].message)))
    symbol, style = _symbol("skip", look)
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(symbol, style=style), Prose(line, style=style))
    return grid


def check_lines(checks: tuple[Check, ...], look: Look) -> list[RenderableType]:
    """Each check as `check_line` draws it, except that a run of checks skipped for the same
    reason ("not judged: see the other checks") is said once, on one line."""
    lines: list[RenderableType] = []
    at = 0
    while at < len(checks):
        run = [checks[at]]
        while (at + len(run) < len(checks) and run[0].status == "skip"
               and checks[at + len(run)].status == "skip"
               and checks[at + len(run)].message == run[0].message
               and not checks[at + len(run)].evidence and not run[0].evidence):
            run.append(checks[at + len(run)])
        lines.append(skipped_line(run, look) if len(run) > 1 else check_line(run[0], look))
        at += len(run)
    return lines


class Evidence:
    """An evidence table, every value whole: in columns when they fit the width, else row by
    row, each value beside its column's name and wrapping under itself. A value is the
    learner's way to see what went wrong, so none is ever cut short with `…`."""

    def __init__(self, columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...],
                 plain: bool) -> None:
        self.columns = columns
        self.rows = rows
        self.plain = plain

    def table(self) -> Table:
        table = Table(*self.columns, box=None if self.plain else box.SIMPLE, show_edge=False,
                      pad_edge=False)
        for row in self.rows:
            table.add_row(*(Text(cell, overflow="fold") for cell in row))
        return table

    def stacked(self) -> RenderableType:
        blocks: list[RenderableType] = []
        for row in self.rows:
            grid = Table.grid(padding=(0, 2, 0, 0))
            grid.add_column(no_wrap=True, style="" if self.plain else "bold")
            grid.add_column(ratio=1)
            for column, cell in zip(self.columns, row, strict=False):
                if cell:
                    grid.add_row(Text(column), Text(cell, overflow="fold"))
            blocks += [Text(""), grid] if blocks else [grid]
        return Group(*blocks)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table()
        natural = console.measure(table, options=options.update_width(10_000)).maximum
        yield table if natural <= options.max_width else self.stacked()


def verdict_view(verdict: Verdict, look: Look) -> RenderableType:
    """The verdict as the learner reads it, in the language of `look.tr`."""
    tr = look.tr
    # messages quote learner exceptions and type names: as unsafe as the output itself
    verdict = neutralise_verdict(verdict)
    symbol, style = _symbol(verdict.status, look)
    title = tr(msg("{exercise}: {title}", exercise=verdict.exercise,
                   title=msg("not written yet") if verdict.missing
                   else _TITLES[verdict.status]))
    timing = (msg("seed {seed}, {ms} ms", seed=verdict.seed, ms=verdict.duration_ms) if look.plain
              else msg("seed {seed} · {ms} ms", seed=verdict.seed, ms=verdict.duration_ms))
    parts: list[RenderableType] = [
        Prose(f"{symbol} {title}", style=f"bold {style}"),
        *([Text(tr(timing), style="grey50")] if verdict.ran else []),
        Text(""),
    ]
    parts += check_lines(verdict.checks, look)
    if verdict.output.strip():
        printed = (msg("Your code printed (cut: it was longer):") if verdict.output_truncated
                   else msg("Your code printed:"))
        parts += [Text(""), Prose(tr(printed), style="bold"),
                  Padding(Text(verdict.output.rstrip()), (0, 0, 0, 2))]
    return Group(*parts)
