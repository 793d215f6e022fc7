"""A demo in the walkthrough: its code runs on arrival and what it gave is shown (a chart, what
it printed); the learner reads and goes on, as on a slide. Pure."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor.lessons.model import Demo
from gradtutor.records import record
from gradtutor.walk.events import Effect, News, RunSnippet
from gradtutor.walk.rules import Stay, StepRules, snippet_news

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult


@record
class DemoView:
    running: bool = True
    result: SnippetResult | None = None

    @property
    def busy(self) -> bool:
        return self.running


class DemoRules(StepRules[Demo, DemoView]):
    runs_code = True

    def open(self, step: Demo) -> DemoView:
        return DemoView()

    def arrive(self, step: Demo) -> list[Effect]:
        series = step.chart.series if step.chart is not None else ()
        return [RunSnippet(step.id, step.code, series=series)]

    def news(self, step: Demo, view: DemoView, news: News) -> Stay[DemoView]:
        ran = snippet_news(news)
        if ran is None:
            return Stay(view)
        result, notice = ran
        if view.running:
            view = replace(view, running=False, result=result)
        return Stay(view, notice=notice)


RULES = DemoRules()
