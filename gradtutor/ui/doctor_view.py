"""`gradtutor doctor`'s report as Rich renderables: each problem with its evidence table, the
place in the script and the lesson step that teaches it; what the doctor could not judge; and
what it observed. Pure: nothing here prints. Every word is said by `look.tr`."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor.doctor.judge import Diagnosis, Finding
from gradtutor.i18n import msg
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, inline
from gradtutor.ui.safe_text import neutralise

_ENDINGS = {
    "finished": msg("the script ended"),
    "exit": msg("the script exited"),
    "error": msg("the script stopped with an error"),
    "interrupted": msg("interrupted"),
    "timeout": msg("stopped by --timeout"),
    "lost": msg("the script's process ended without a word (killed, or os._exit)"),
}


def finding_view(finding: Finding, look: Look) -> RenderableType:
    tr = look.tr
    lesson, step = finding.lesson
    symbol, style = (look.bad, "red") if finding.certain else ("?", "yellow")
    parts: list[RenderableType] = [
        Prose(f"{symbol} {finding.id}" + (f"  {neutralise(finding.where)}" if finding.where
                                          else ""), style=f"bold {style}"),
        Padding(Prose(tr(finding.summary)), (0, 0, 0, 2))]
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for label, value in finding.evidence:
        table.add_row(Text(tr(label)), Text(neutralise(tr(value))))
    parts.append(Padding(table, (0, 0, 0, 2)))
    parts.append(Padding(inline(tr(msg(
        "The lesson that teaches it: `gradtutor show {lesson} --step {step}`",
        lesson=lesson, step=step)), look), (0, 0, 0, 2)))
    return Group(*parts)


def report_view(diagnosis: Diagnosis, look: Look) -> RenderableType:
    tr = look.tr
    parts: list[RenderableType] = []
    if diagnosis.ending == "steps":
        ending = (msg("stopped after {steps} optimizer steps, as asked", steps=diagnosis.steps)
                  if diagnosis.steps else msg(
                      "stopped after {count} backward passes, as asked (without an optimizer, "
                      "each backward pass counts as a step)", count=diagnosis.backwards))
    else:
        ending = _ENDINGS.get(diagnosis.ending, _ENDINGS["lost"])
    parts.append(Text(tr(msg("Observed {steps} optimizer steps and {backwards} backward "
                             "passes; {ending}.", steps=diagnosis.steps,
                             backwards=diagnosis.backwards, ending=ending))))
    if diagnosis.error:
        parts.append(Text(neutralise(tr(msg("The script's error: {error} ({line})",
                                            error=diagnosis.error,
                                            line=diagnosis.error_line or "?")))))
    if diagnosis.fault:
        parts.append(Text(tr(msg("The doctor stopped observing early after a fault of its "
                                 "own: {error}", error=diagnosis.fault)), style="yellow"))
    parts.append(Text(""))
    for finding in diagnosis.findings:
        parts += [finding_view(finding, look), Text("")]
    if diagnosis.notes:
        parts.append(Text(tr(msg("Could not tell:")), style="bold yellow"))
        for note in diagnosis.notes:
            parts += [finding_view(note, look), Text("")]
    if diagnosis.findings:
        count = len(diagnosis.findings)
        parts.append(Text(tr(msg("{count} gradient problem found.", count=count) if count == 1
                             else msg("{count} gradient problems found.", count=count)),
                          style="bold red"))
    else:
        seen = (msg("No gradient problem seen in {steps} steps.", steps=diagnosis.steps)
                if diagnosis.steps else msg("No gradient problem seen in {count} backward "
                                            "passes.", count=diagnosis.backwards))
        parts.append(Text(f"{look.ok} " + tr(seen), style="bold green"))
    return Group(*parts)
