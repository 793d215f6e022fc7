"""A prediction in the walkthrough: the learner picks what a snippet will show, then it runs
and the real value is shown beside the guess, marked right or wrong. Pure."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor import progress as prog
from gradtutor.i18n import msg
from gradtutor.lessons.model import LETTERS, Predict
from gradtutor.records import record
from gradtutor.walk.events import Answer, Choose, Event, News, Record, RunSnippet
from gradtutor.walk.rules import (
    Go,
    Stay,
    StepRules,
    choose_first,
    in_range,
    snippet_news,
    unknown_notice,
)

if TYPE_CHECKING:
    from gradtutor.bindings import Kind
    from gradtutor.checking.snippet import SnippetResult


@record
class RecordPrediction(Record):
    step_id: str
    answer: str
    right: bool

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_prediction(progress, lesson_id, self.step_id, self.answer,
                                      self.right, now)


@record
class Predicted:
    """A submitted prediction as its screen shows it: the choice, the right one (indexes) and
    whether they are the same."""

    chosen: int
    answer: int
    right: bool


def judge(step: Predict, chosen: int) -> Predicted:
    """The verdict on choosing choice `chosen` of `step`."""
    answer = LETTERS.index(step.answer)
    return Predicted(chosen, answer, chosen == answer)


@record
class PredictView:
    """A predict step: the choice made, whether it is submitted, and the snippet's run."""

    chosen: int | None = None
    submitted: bool = False
    running: bool = False
    result: SnippetResult | None = None

    @property
    def busy(self) -> bool:
        return self.running

    def prediction(self, step: Predict) -> Predicted | None:
        """The submitted prediction, judged; None before it is submitted."""
        if not self.submitted or self.chosen is None:
            return None
        return judge(step, self.chosen)


class PredictRules(StepRules[Predict, PredictView]):
    runs_code = True

    def open(self, step: Predict) -> PredictView:
        return PredictView()

    def handle(self, step: Predict, view: PredictView, event: Event) -> Stay[PredictView] | Go:
        last = len(step.choices)
        if view.submitted or event in ("next", "back"):  # → moves on without an answer too
            if event in ("next", "submit"):
                return "forward"
            if event == "back":
                return "back"
            return Stay(view, notice=unknown_notice(event))
        if isinstance(event, Choose) and 0 <= event.index < len(step.choices):
            return Stay(replace(view, chosen=event.index))
        if isinstance(event, Answer):
            if len(event.indexes) != 1 or not in_range(event.indexes, last):
                return Stay(view, notice=msg("Answer with one number, 1-{last}.", last=last))
            view = replace(view, chosen=min(event.indexes))
            event = "submit"
        if event == "submit":
            if view.chosen is None:
                return Stay(view, notice=choose_first(last))
            verdict = judge(step, view.chosen)
            return Stay(replace(view, submitted=True, running=True), [
                RecordPrediction(step.id, LETTERS[view.chosen], verdict.right),
                RunSnippet(step.id, step.code, show=step.show)])
        return Stay(view, notice=unknown_notice(event))

    def news(self, step: Predict, view: PredictView, news: News) -> Stay[PredictView]:
        ran = snippet_news(news)
        if ran is None:
            return Stay(view)
        result, notice = ran
        if view.running:
            view = replace(view, running=False, result=result)
        return Stay(view, notice=notice)

    def keys(self, step: Predict, view: PredictView) -> Kind:
        return "slide" if view.submitted else "predict"

    def choices(self, step: Predict, view: PredictView) -> int:
        return 0 if view.submitted else len(step.choices)


RULES = PredictRules()
