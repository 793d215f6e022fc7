"""The bodies of the practice steps that run real code: predict, Parsons and demo.

Pure: each takes the step, what the learner did so far and the result of the run (None while
it is running) and returns Rich renderables. Text that code produced (a shown value, output,
an error) is neutralised before it is drawn. The chart module is imported only when a demo
with a chart has its result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from gradtutor.bindings import choice_key
from gradtutor.i18n import msg
from gradtutor.lessons.model import Demo, Parsons, Predict
from gradtutor.lessons.parsons import initial_order
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, code_block, inline, markdown, tagged
from gradtutor.ui.safe_text import neutralise

if TYPE_CHECKING:
    from gradtutor.walk.parsons import OrderGrade
    from gradtutor.walk.predict import Predicted

RUNNING = msg("running ...")
_SHOWN_VALUES = 12  # a Parsons run shows this many recorded values at most


class RunResult(Protocol):
    """What a run of a snippet hands back (gradtutor.checking.snippet.SnippetResult)."""

    @property
    def ok(self) -> bool: ...

    @property
    def shown(self) -> str | None: ...

    @property
    def series(self) -> Sequence[tuple[str, Sequence[float]]]: ...

    @property
    def output(self) -> str: ...

    @property
    def error(self) -> str | None: ...


# --- predict ----------------------------------------------------------------------------------


def predict_body(step: Predict, predicted: Predicted | None, result: RunResult | None,
                 look: Look, running: bool = False) -> RenderableType:
    """Before an answer (`predicted` None): prompt, code and the numbered choices. After: the
    learner's choice marked right or wrong with its why (and the right one's, if it was
    wrong), beside the value the snippet really shows once `result` has arrived. While the
    snippet is `running`, the choice waits beside the running value: the verdict comes with
    the value it is about, never above a value still being worked out."""
    parts: list[RenderableType] = [markdown(step.prompt, look), Text(""),
                                   code_block(step.code, look), Text("")]
    if predicted is None:
        for i, choice in enumerate(step.choices):
            parts.append(Padding(Text.assemble(f"{choice_key(i)}) ", inline(choice.text, look)),
                                 (0, 0, 0, 2)))
        return Group(*parts)
    chosen, right = predicted.chosen, predicted.right
    verdict = f"{look.ok} " + look.tr(msg("Right.")) if right else (
        f"{look.bad} " + look.tr(msg("Not quite.")))
    if not running:
        parts += [Prose(verdict, style="bold green" if right else "bold red"), Text("")]
    table = _pairs([
        (look.tr(msg("You predicted")),
         Prose.assemble(f"{choice_key(chosen)}) ",
                        inline(step.choices[chosen].text, look, "bold"))),
        (look.tr(msg("{expression} is", expression=step.show)), _shown(result, look)),
    ])
    parts.append(Padding(table, (0, 0, 0, 2)))
    if running:
        return Group(*parts)
    parts += [Text(""), Padding(inline(step.choices[chosen].why, look), (0, 0, 0, 2))]
    if not right:
        correct = step.choices[predicted.answer]
        parts += [Text(""), Padding(Prose.assemble(
            (look.tr(msg("The answer is {number}) ", number=choice_key(predicted.answer))),
             "bold"),
            inline(correct.text, look, "bold"), look.tr(msg(": ")),
            inline(correct.why, look)), (0, 0, 0, 2))]
    return Group(*parts)


def predict_pending(step: Predict, chosen: int | None, look: Look) -> RenderableType:
    """A prediction not submitted yet: the step, and the choice made so far (`chosen`), if
    any, with how to submit it."""
    body = predict_body(step, None, None, look)
    if chosen is None:
        return body
    return Group(body, Text(""), Prose.assemble(
        (look.tr(msg("Your prediction: ")), "bold"), f"{choice_key(chosen)}) ",
        inline(step.choices[chosen].text, look, "bold"),
        ("  " + look.tr(msg("(Enter submits it)")), "grey50")))


def _shown(result: RunResult | None, look: Look) -> Text:
    if result is None:
        return Prose(look.tr(RUNNING), style="italic cyan")
    if result.error is not None:
        return Prose(look.tr(msg("the snippet failed: {error}", error=neutralise(result.error))),
                     style="yellow")
    if result.shown is None:
        return Prose(look.tr(msg("(nothing was shown)")), style="italic")
    return Text(neutralise(result.shown), style="bold")


def _pairs(rows: Sequence[tuple[str, Text]]) -> RenderableType:
    """Label and value side by side; the value keeps its own indent when it wraps."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for label, value in rows:
        grid.add_row(Prose(label), value)
    return grid


# --- parsons ----------------------------------------------------------------------------------


def parsons_body(step: Parsons, order: Sequence[str], cursor: int, grabbed: bool,
                 grade: OrderGrade | None, run: RunResult | None,
                 look: Look) -> RenderableType:
    """The lines, numbered in the learner's current `order`, with the cursor on line `cursor`
    (0-based) and that line marked as moving when `grabbed`. Once graded (`grade`): the line
    out of place marked, the failed check's message (never its hint, which says where the
    line goes: hints come only when asked, and `check --verbose` asks), and after a pass the
    effect of running the loop (`run`, None while it runs)."""
    parts: list[RenderableType] = [markdown(step.prompt, look), Text("")]
    wrong = grade.out_of_place if grade is not None else None
    width = len(str(len(order)))
    for n, line_id in enumerate(order):
        here = n == cursor
        pointer = (">" if look.plain else "❯") if here else " "
        row = Text(f"{pointer} {str(n + 1).rjust(width)}. ",
                   style="bold cyan" if here and not look.plain else "")
        style = "bold" if here else ""
        if here and grabbed:
            style = "bold reverse" if not look.plain else ""
        row.append(step.line(line_id).code, style=style)
        if here and grabbed:
            row.append("  " + look.tr(msg("(moving)")), style="" if look.plain else "bold yellow")
        if line_id == wrong:
            row.append(f"  {look.bad} " + look.tr(msg("out of place")),
                       style="" if look.plain else "bold red")
        parts.append(row)
    if grade is not None:
        parts += [Text(""), _verdict(grade, look)]
        if grade.passed and step.run is not None:
            parts += [Text(""), _effect(step, run, look)]
    return Group(*parts)


def _verdict(grade: OrderGrade, look: Look) -> RenderableType:
    """The grade of an order: the failed check's message is followed by `[EN]` when the
    explanation of the line out of place, which it quotes, is in English."""
    check = grade.failed
    if check is None:
        return Prose(f"{look.ok} " + look.tr(msg("Right: every line comes after the lines it "
                                                 "needs.")), style="bold green")
    return Prose.assemble((f"{look.bad} " + look.tr(msg("Not yet: ")), "bold red"),
                          tagged(inline(look.tr(check.message), look), grade.why, look))


def _effect(step: Parsons, run: RunResult | None, look: Look) -> RenderableType:
    """What the assembled loop did: its recorded values, one per pass, first to last."""
    assert step.run is not None
    ran = msg("Your step ran {repeat} times; `{series}` after each:", repeat=step.run.repeat,
              series=step.run.series)
    title = inline(look.tr(ran), look, "bold")
    if run is None:
        return Group(title, Padding(Prose(look.tr(RUNNING), style="italic cyan"), (0, 0, 0, 2)))
    if run.error is not None:
        failed = msg("the loop failed: {error}", error=neutralise(run.error))
        return Group(title, Padding(Prose(look.tr(failed), style="yellow"), (0, 0, 0, 2)))
    values = dict(run.series).get(step.run.series)
    if not values:
        return Group(title, Padding(Prose(look.tr(msg("(no values were recorded)")),
                                          style="italic"), (0, 0, 0, 2)))
    return Group(title, Padding(Text(_values_line(values, look)), (0, 0, 0, 2)),
                 Padding(Prose(look.tr(_trend(values))), (0, 0, 0, 2)))


def _values_line(values: Sequence[float], look: Look) -> str:
    shown = [_short(v) for v in values]
    if len(shown) > _SHOWN_VALUES:
        shown = [*shown[: _SHOWN_VALUES - 3], "..." if look.plain else "…", *shown[-2:]]
    return ", ".join(shown)


def _short(value: float) -> str:
    return f"{value:.3g}"


def _trend(values: Sequence[float]) -> str:
    first, last = _short(values[0]), _short(values[-1])
    if not (math.isfinite(values[0]) and math.isfinite(values[-1])):
        return msg("from {first} to {last}", first=first, last=last)
    if values[-1] < values[0]:
        return msg("it fell from {first} to {last}", first=first, last=last)
    if values[-1] > values[0]:
        return msg("it rose from {first} to {last}", first=first, last=last)
    return msg("it stayed from {first} to {last}", first=first, last=last)


# --- demo -------------------------------------------------------------------------------------


def demo_body(step: Demo, result: RunResult | None, width: int,
              look: Look) -> RenderableType:
    """The demo's text and code, then what running it gave: the chart of the series its
    `chart` names (underscores in a name read as spaces), and anything it printed."""
    parts: list[RenderableType] = [markdown(step.body, look), Text(""),
                                   code_block(step.code, look), Text("")]
    if result is None:
        parts.append(Prose(look.tr(RUNNING), style="italic cyan"))
        return Group(*parts)
    if result.error is not None:
        failed = msg("The code failed: {error}", error=neutralise(result.error))
        parts.append(Prose(look.tr(failed), style="yellow"))
        return Group(*parts)
    if step.chart is not None:
        from gradtutor.ui.chart import line_chart

        found = dict(result.series)
        missing = [name for name in step.chart.series if name not in found]
        drawn = [(step.chart.label(k), found[name]) for k, name in enumerate(step.chart.series)
                 if name in found]
        if drawn:
            parts.append(line_chart(drawn, title=step.chart.title, x_label=step.chart.x_label,
                                    y_label=step.chart.y_label, width=width, look=look))
        if missing:
            left = msg("(the code left no {names} to draw)", names=", ".join(missing))
            parts.append(Prose(look.tr(left), style="italic"))
    output = result.output.rstrip()
    if output:
        if step.chart is not None:
            parts.append(Text(""))
        parts += [Prose(look.tr(msg("It printed:")), style="bold"),
                  Padding(Text(neutralise(output)), (0, 0, 0, 2))]
    elif step.chart is None:
        parts.append(Prose(look.tr(msg("(it printed nothing)")), style="italic"))
    return Group(*parts)


# --- for reading (gradtutor show) -------------------------------------------------------------
# Nothing runs and no answer is given away; each says how to try the step.


def predict_reading(step: Predict, look: Look) -> RenderableType:
    how = msg("In `gradtutor start`, pick an answer; the snippet then runs and shows the "
              "value.")
    return _reading([predict_body(step, None, None, look)], how, look)


def parsons_reading(step: Parsons, look: Look) -> RenderableType:
    """The lines in the starting order, and how to check an order of them."""
    how = msg("Try it: write these lines in a working order in {id}.txt, one per line, "
              "and run `gradtutor check {id} {id}.txt`.", id=step.id)
    return _reading([parsons_body(step, initial_order(step), -1, False, None, None, look)], how,
                    look)


def demo_reading(step: Demo, look: Look) -> RenderableType:
    how = msg("`gradtutor start` runs this code and shows what it gives.")
    return _reading([markdown(step.body, look), Text(""), code_block(step.code, look)], how,
                    look)


def _reading(parts: list[RenderableType], how: str, look: Look) -> RenderableType:
    return Group(*parts, Text(""), inline(look.tr(how), look, "italic"))
