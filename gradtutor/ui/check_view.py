"""A Verdict as Rich renderables: each check with a symbol and a word, its evidence, and the
learner's own output with control sequences made harmless. Pure: nothing here prints."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor.checking.feedback import neutralise_verdict
from gradtutor.checking.verdict import Check, Verdict
from gradtutor.ui.render import Look, inline

_WORDS = {"pass": "passed", "fail": "failed", "error": "error", "timeout": "timed out",
          "skip": "not run"}


def _symbol(status: str, look: Look) -> tuple[str, str]:
    if status == "pass":
        return look.ok, "green"
    if status == "skip":
        return "-", "grey50"
    return look.bad, "red" if status == "fail" else "yellow"


def check_line(check: Check, look: Look) -> RenderableType:
    symbol, style = _symbol(check.status, look)
    head = Text(f"{symbol} {check.name}: {_WORDS[check.status]}", style=f"bold {style}")
    parts: list[RenderableType] = [head]
    if check.status != "pass" or look.plain:
        # a traceback keeps its lines; prose flows and highlights its `code`
        body = Text(check.message) if "\n" in check.message.strip() else inline(check.message, look)
        parts.append(Padding(body, (0, 0, 0, 2)))
    if check.evidence is not None:
        table = Table(*check.evidence.columns, box=None if look.plain else box.SIMPLE,
                      show_edge=False, pad_edge=False)
        for row in check.evidence.rows:
            table.add_row(*(Text(cell) for cell in row))
        parts.append(Padding(table, (0, 0, 0, 2)))
    if check.help and check.status != "pass":
        parts.append(Padding(Text.assemble(("hint: ", "bold"), inline(check.help, look)),
                             (0, 0, 0, 2)))
    return Group(*parts)


def verdict_view(verdict: Verdict, look: Look) -> RenderableType:
    # messages quote learner exceptions and type names: as unsafe as the output itself
    verdict = neutralise_verdict(verdict)
    symbol, style = _symbol(verdict.status, look)
    title = {"pass": "Passed", "fail": "Not yet", "error": "Your code did not run to the end",
             "timeout": "Timed out"}[verdict.status]
    parts: list[RenderableType] = [
        Text(f"{symbol} {verdict.exercise}: {title}", style=f"bold {style}"),
        Text(f"seed {verdict.seed} · {verdict.duration_ms} ms" if not look.plain
             else f"seed {verdict.seed}, {verdict.duration_ms} ms", style="grey50"),
        Text(""),
    ]
    parts += [check_line(check, look) for check in verdict.checks]
    if verdict.output.strip():
        more = " (cut: it was longer)" if verdict.output_truncated else ""
        parts += [Text(""), Text(f"Your code printed{more}:", style="bold"),
                  Padding(Text(verdict.output.rstrip()), (0, 0, 0, 2))]
    return Group(*parts)
