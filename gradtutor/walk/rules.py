"""How one kind of step behaves in the walkthrough: what it shows first, what its keys do,
what the shell's news changes. Pure.

A kind's rules see only its step and its view (where the learner is on it); they answer with
`Stay` (the new view, effects, perhaps a notice) or with `Go` (leave the step, forward or
back), which the state machine carries out. The defaults here are a slide's: it pages on.
Each kind's module names its rules `RULES` (`gradtutor.walk.kinds` finds them there).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from gradtutor.i18n import msg
from gradtutor.records import record
from gradtutor.walk.events import Effect, Event, News, SnippetDone, SnippetFailed, Unknown

if TYPE_CHECKING:
    from gradtutor.bindings import Kind
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.lessons.model import Exercise

StepT = TypeVar("StepT")
ViewT = TypeVar("ViewT")

# Leave the step: on to the next one, or back to the previous one.
Go = Literal["forward", "back"]


@record
class Stay(Generic[ViewT]):
    """Stay on the step with `view`; the shell does `effects`. `notice` is the line for the
    learner (None: the one on screen stays)."""

    view: ViewT
    effects: list[Effect] = field(default_factory=list)
    notice: str | None = None


class StepRules(Generic[StepT, ViewT]):
    """The rules of one kind of step. The defaults: a step read and left, as a slide is."""

    # Its code runs in the background (a check, a snippet): the lesson needs the worker.
    runs_code: bool = False

    def open(self, step: StepT) -> ViewT:
        """The view on opening the step."""
        raise NotImplementedError

    def arrive(self, step: StepT) -> list[Effect]:
        """What the shell must do once the step is on screen."""
        return []

    def handle(self, step: StepT, view: ViewT, event: Event) -> Stay[ViewT] | Go:
        """A learner's event (help and quit are handled before)."""
        return page_on(view, event)

    def news(self, step: StepT, view: ViewT, news: News) -> Stay[ViewT]:
        """The shell's news about this step, while the learner is on it."""
        return Stay(view)

    def records(self, step: StepT, news: News) -> list[Effect]:
        """What the shell's news about this step records, wherever the learner is now."""
        return []

    def keys(self, step: StepT, view: ViewT) -> Kind:
        """Which table of keys the screen answers to."""
        return "slide"

    def choices(self, step: StepT, view: ViewT) -> int:
        """How many choices the screen offers to pick by number."""
        return 0

    def at_end(self, step: StepT, view: ViewT) -> bool:
        """The step has been taken to its end while still on screen (a quiz's score)."""
        return False

    def watched(self, step: StepT, view: ViewT) -> Exercise | None:
        """The exercise whose file the shell should watch while the step is on screen."""
        return None


def page_on(view: ViewT, event: Event) -> Stay[ViewT] | Go:
    """Next and Enter go forward, back goes back; anything else says it does nothing."""
    if event in ("next", "submit"):
        return "forward"
    if event == "back":
        return "back"
    return Stay(view, notice=unknown_notice(event))


def snippet_news(news: News) -> tuple[SnippetResult | None, str | None] | None:
    """News of a step's code: what it gave (None if it could not run) and the notice that
    says why it could not; None for other news."""
    if isinstance(news, SnippetDone):
        return news.result, None
    if isinstance(news, SnippetFailed):
        return None, news.message
    return None


def unknown_notice(event: Event) -> str:
    if isinstance(event, Unknown):
        if not event.text:  # a key no terminal table names: nothing to say about it
            return ""
        return msg("'{shown}' does nothing here: press ? for the keys.", shown=event.text)
    return msg("'that' does nothing here: press ? for the keys.")


def choose_first(last: int) -> str:
    return msg("Choose an answer first: press a number 1-{last}.", last=last)


def in_range(indexes: frozenset[int], choices: int) -> bool:
    """A typed answer names at least one choice, and only choices there are."""
    return bool(indexes) and min(indexes) >= 0 and max(indexes) < choices
