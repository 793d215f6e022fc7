"""A Verdict as Rich renderables, with the learner's own output made harmless to a terminal.
Pure: nothing here prints.

Two cuts of one verdict. The short one, shown first, fits one 80x24 screen: what failed, the
first failing check's words with its evidence for the first failing case, the other checks
by name, and a line saying how to see the rest. The whole one (`v` in the tutor, `check
--verbose`) has every check's words, every case of its evidence and its hint: a check's
hint is shown only there, asked for. Every word is said by `look.tr`; the checks' messages,
hints and evidence are messages (`msg()`) too, so a learner reading Chinese sees no English
feedback line."""

from __future__ import annotations

import re

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor.checking.verdict import Check, Verdict, say
from gradtutor.i18n import Translator, msg
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


def check_line(check: Check, look: Look, whole: bool = True) -> RenderableType:
    """A check as the learner reads it: its name and status, its words unless it passed,
    its evidence, and its note; `whole` adds its hint, and every case of its evidence where
    the short cut keeps only the first failing one. A known mistake the file is, is said
    once: by the check's own words."""
    tr = look.tr
    parts: list[RenderableType] = [heading(check, look)]
    if check.status != "pass" or (look.plain and whole):
        # a traceback keeps its lines; prose flows and highlights its `code`
        message = say(tr, check.message)
        message = message if whole else first_sentence(message)
        body = Prose(message) if "\n" in message.strip() else inline(message, look)
        parts.append(Padding(body, (0, 0, 0, 2)))
    if check.evidence is not None:
        columns = tuple(say(tr, column) for column in check.evidence.columns)
        rows = check.evidence.failing_first()
        # a table of cases is cut to the first failing one; one that marks none (the
        # learner's order of lines) is one piece of evidence, whole
        rows = rows[:1] if not whole and check.evidence.failing else rows
        parts.append(Padding(Evidence(columns, tuple(tuple(say(tr, cell) for cell in row)
                                                     for row in rows), look.plain),
                             (0, 0, 0, 2)))
    if whole and check.help and check.status != "pass":
        # the label carries its own spacing: "hint: " in English, none after "：" in Chinese
        parts.append(Padding(Prose.assemble((tr(msg("hint: ")), "bold"),
                                           inline(say(tr, check.help), look)), (0, 0, 0, 2)))
    if check.note:
        parts.append(_note(check.note, look))
    return Group(*parts)


# A sentence ends at . ! ? followed by a space and what starts a sentence, or at a Chinese
# full stop; a traceback (several lines) is one piece, never cut.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])|(?<=[。！？])(?=\S)")


def first_sentence(text: str) -> str:
    """The first sentence of a check's words: the why, which the short cut keeps. A full
    stop inside a `code` span (`w.grad`), or in an abbreviation before a small letter, is
    no end."""
    if "\n" in text.strip():
        return text
    for found in _SENTENCE_END.finditer(text):
        if text[:found.start()].count("`") % 2 == 0:
            return text[:found.start()].rstrip()
    return text


def heading(check: Check, look: Look) -> RenderableType:
    """A check's name and status, on a line of their own."""
    symbol, style = _symbol(check.status, look)
    said = look.tr(msg("{name}: {status}", name=check.name, status=_WORDS[check.status]))
    return Prose(f"{symbol} {said}", style=f"bold {style}")


def _note(note: str, look: Look) -> RenderableType:
    return Padding(Prose.assemble((look.tr(msg("note: ")), "bold"),
                                  inline(say(look.tr, note), look)), (0, 0, 0, 2))


def named_line(checks: list[Check], look: Look) -> RenderableType:
    """Checks of one status by name only, as one line that wraps under itself ("✓ passed:
    a, b, c")."""
    symbol, style = _symbol(checks[0].status, look)
    line = look.tr(msg("{status}: {names}", status=_WORDS[checks[0].status],
                       names=", ".join(check.name for check in checks)))
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(symbol, style=f"bold {style}"), Prose(line, style=f"bold {style}"))
    return grid


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


# How many lines of what the learner's code printed the short cut shows: one, on the line
# that says it printed, so a file that prints still gets its verdict on one screen.
SHORT_OUTPUT_LINES = 1


def verdict_view(verdict: Verdict, look: Look, whole: bool = True,
                 more: str = "") -> RenderableType:
    """The verdict as the learner reads it, in the language of `look.tr`: whole, or cut
    to one screen (`whole` False), where `more` is the line that says how to see the rest
    (shown when something was left out)."""
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
        *([Text("")] if whole else []),
    ]
    if whole:
        parts += check_lines(verdict.checks, look)
    else:
        parts += short_lines(verdict.checks, look)
    output = verdict.output.rstrip()
    if output.strip():
        lines = output.split("\n")
        cut = verdict.output_truncated or (not whole and len(lines) > SHORT_OUTPUT_LINES)
        printed = (msg("Your code printed (cut: it was longer):") if cut
                   else msg("Your code printed:"))
        if whole:
            parts += [Text(""), Prose(tr(printed), style="bold"),
                      Padding(Text(output), (0, 0, 0, 2))]
        else:  # one line: the words, then the first line printed, cut at the edge
            first = Text.assemble((tr(printed), "bold"), " ", lines[0])
            first.no_wrap, first.overflow = True, "ellipsis"
            parts.append(first)
    if more and not whole and left_out(verdict, tr):
        parts.append(inline(tr(more), look, "grey50"))
    return Group(*parts)


def _first_failing(checks: tuple[Check, ...]) -> int | None:
    return next((i for i, check in enumerate(checks)
                 if check.status in ("fail", "error", "timeout")), None)


def short_lines(checks: tuple[Check, ...], look: Look) -> list[RenderableType]:
    """The checks cut to one screen: those that passed by name on one line, the first that
    failed with the first sentence of its words and its first failing case, the others that
    failed by name, one line each, and those not run by name on one line."""
    first = _first_failing(checks)
    passed = [check for check in checks if check.status == "pass"]
    lines: list[RenderableType] = [named_line(passed, look)] if passed else []
    lines += [_note(check.note, look) for check in passed if check.note]
    for at, check in enumerate(checks):
        if check.status in ("pass", "skip"):
            continue
        lines.append(check_line(check, look, whole=False) if at == first
                     else heading(check, look))
    skipped = [check for check in checks if check.status == "skip"]
    if skipped:  # why they were not run is for the whole verdict: the failures above say it
        lines.append(named_line(skipped, look))
    return lines


def left_out(verdict: Verdict, tr: Translator) -> bool:
    """The short cut of `verdict` leaves out something of a check that did not pass: its
    words, a case of its evidence, or its hint; or lines of what the learner's code
    printed."""
    first = _first_failing(verdict.checks)
    for at, check in enumerate(verdict.checks):
        if check.status == "pass":
            continue
        if check.status == "skip" and check.message:
            return True
        if check.help or (check.evidence is not None and len(check.evidence.failing) > 0
                          and len(check.evidence.rows) > 1):
            return True
        if at != first and check.status != "skip" and (check.message or check.evidence):
            return True
        if at == first and first_sentence(say(tr, check.message)) != say(tr, check.message):
            return True
    return len(verdict.output.rstrip().split("\n")) > SHORT_OUTPUT_LINES
