"""A Parsons step in the walkthrough: the learner puts shuffled lines in order (moving one at a
time, or typing the whole order), the order is graded, and a right one is run. Pure."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor.checking.parsons import grade
from gradtutor.i18n import msg
from gradtutor.lessons.model import Parsons
from gradtutor.lessons.parsons import assembled, initial_order, run_series
from gradtutor.records import record
from gradtutor.walk.events import Event, News, Order, RunSnippet, WriteOrder
from gradtutor.walk.rules import Go, Stay, StepRules, page_on, snippet_news

if TYPE_CHECKING:
    from gradtutor.bindings import Kind
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.checking.verdict import Check, Verdict


@record
class OrderGrade:
    """A graded order as the Parsons screen shows it: whether it passed, the line to mark as
    out of place (None if none), the first check that did not pass (its message and hint are
    shown) and the lesson's explanation of that line, which the message quotes."""

    passed: bool
    out_of_place: str | None
    failed: Check | None
    why: str


def graded(step: Parsons, verdict: Verdict) -> OrderGrade:
    """What the screen shows of `verdict`, the grade of an order of `step`'s lines."""
    wrong = verdict.extra.get("out_of_place")
    line = next((line for line in step.lines if line.id == wrong), None)
    failed = next((c for c in verdict.checks if c.status not in ("pass", "skip")), None)
    return OrderGrade(verdict.passed, line.id if line is not None else None, failed,
                      line.why if line is not None else "")


@record
class ParsonsView:
    """A Parsons step: the lines' order (ids), the cursor, whether the line under it is
    grabbed, the grade of the last submitted order, and the run of a correct one."""

    order: tuple[str, ...]
    cursor: int = 0
    grabbed: bool = False
    verdict: Verdict | None = None
    running: bool = False
    run: SnippetResult | None = None

    @property
    def busy(self) -> bool:
        return self.running

    def grade(self, step: Parsons) -> OrderGrade | None:
        """The last submitted order's grade, as the screen shows it; None before one."""
        return graded(step, self.verdict) if self.verdict is not None else None


class ParsonsRules(StepRules[Parsons, ParsonsView]):
    runs_code = True

    def open(self, step: Parsons) -> ParsonsView:
        return ParsonsView(order=initial_order(step))

    def handle(self, step: Parsons, view: ParsonsView, event: Event) -> Stay[ParsonsView] | Go:
        last = len(view.order) - 1
        if event in ("up", "down"):
            target = max(0, min(last, view.cursor + (-1 if event == "up" else 1)))
            if not view.grabbed or target == view.cursor:
                return Stay(replace(view, cursor=target))
            swapped = list(view.order)
            swapped[view.cursor], swapped[target] = swapped[target], swapped[view.cursor]
            # a new order: the old grade no longer applies
            return Stay(replace(view, order=tuple(swapped), cursor=target, verdict=None,
                                run=None, running=False))
        if event == "grab":
            return Stay(replace(view, grabbed=not view.grabbed))
        if isinstance(event, Order):
            numbers = event.numbers
            if sorted(numbers) != list(range(1, len(view.order) + 1)):
                example = " ".join(str(n) for n in [2, 1, *range(3, len(view.order) + 1)])
                return Stay(view, notice=msg("Type each line number once, in the new order, "
                                             "such as {example}.", example=example))
            order = tuple(view.order[n - 1] for n in numbers)
            return _grade(step, replace(view, order=order, verdict=None))
        if event == "submit":
            if view.verdict is not None and view.verdict.passed:
                return "forward"
            return _grade(step, view)
        return page_on(view, event)

    def news(self, step: Parsons, view: ParsonsView, news: News) -> Stay[ParsonsView]:
        ran = snippet_news(news)
        if ran is None:
            return Stay(view)
        result, notice = ran
        if view.running:
            view = replace(view, running=False, run=result)
        return Stay(view, notice=notice)

    def keys(self, step: Parsons, view: ParsonsView) -> Kind:
        verdict = view.verdict
        return "ordered" if verdict is not None and verdict.passed else "parsons"


RULES = ParsonsRules()


def _grade(step: Parsons, view: ParsonsView) -> Stay[ParsonsView]:
    """Grade the order on screen; it is the step's answer now, in its answer file too, so
    that `gradtutor check` grades what the learner last answered here."""
    verdict = grade(step, view.order)
    view = replace(view, verdict=verdict, grabbed=False, run=None, running=False)
    answer = WriteOrder(step.id, tuple(step.line(line_id).code for line_id in view.order))
    if not verdict.passed or step.run is None:
        return Stay(view, [answer])
    return Stay(replace(view, running=True),
                [answer, RunSnippet(step.id, assembled(step, view.order),
                                    series=run_series(step))])
