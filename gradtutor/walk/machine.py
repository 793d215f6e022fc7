"""The walkthrough as a pure state machine: (lesson, state, event) -> (state, effects).

Events come from key presses or typed lines, and from work the shell does in the background
(a save noticed, a check's verdict). Effects are what the shell must do. Nothing here reads
keys, prints, touches the disk or starts anything, so every path through a lesson is testable
without a terminal. What an event does on a step is its kind's business (`kinds.RULES`);
here: moving between steps, the help, quitting, and whose news is whose.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor.bindings import Ask, Kind, Scroll
from gradtutor.i18n import msg
from gradtutor.walk.events import Effect, Event, Finished, GoTo, News, Say, Visit
from gradtutor.walk.kinds import rules_for
from gradtutor.walk.rules import Go, Stay
from gradtutor.walk.state import WalkState

if TYPE_CHECKING:
    from gradtutor.lessons.model import Exercise, Lesson
    from gradtutor.walk.state import StepView


def begin(lesson: Lesson, index: int) -> WalkState:
    """The state on opening step `index`."""
    index = max(0, min(index, len(lesson.steps) - 1))
    step = lesson.steps[index]
    return WalkState(index=index, view=rules_for(step).open(step))


def enter(lesson: Lesson, index: int) -> tuple[WalkState, list[Effect]]:
    """Open step `index`: its state, and what the shell must do once it is on screen."""
    state = begin(lesson, index)
    step = lesson.steps[state.index]
    return state, [Visit(step.id), *rules_for(step).arrive(step)]


_ONLY_STEP = msg("This is the only step here: q stops watching.")


def go_forward(lesson: Lesson, state: WalkState) -> tuple[WalkState, list[Effect]]:
    """On to the next step, or the end of the lesson after the last; when watching, a move
    never ends the walk (as on the walkthrough's exercise screen): a notice says so."""
    if state.index + 1 >= len(lesson.steps):
        if state.watching:
            return replace(state, notice=_ONLY_STEP), []
        return replace(state, outcome="finished", notice=""), [Finished()]
    return _moved(lesson, state, state.index + 1)


def go_back(lesson: Lesson, state: WalkState) -> tuple[WalkState, list[Effect]]:
    """Back to the previous step; on the first, a notice says so."""
    if state.index == 0:
        return replace(state, notice=_ONLY_STEP if state.watching
                       else msg("This is the first step.")), []
    return _moved(lesson, state, state.index - 1)


def _moved(lesson: Lesson, state: WalkState, index: int) -> tuple[WalkState, list[Effect]]:
    """Step `index` opened, in the same walk as `state` (watching or not)."""
    moved, effects = enter(lesson, index)
    return replace(moved, watching=state.watching), effects


def handle(lesson: Lesson, state: WalkState, event: Event) -> tuple[WalkState, list[Effect]]:
    """Apply one event; return the new state and what the shell must do."""
    if isinstance(event, (Scroll, Ask)):  # the shell's own business: the lesson does not move
        return state, []
    if isinstance(event, GoTo):
        if state.watching or not 0 <= event.index < len(lesson.steps):
            return state, []
        return _moved(lesson, state, event.index)
    # the shell's news never closes the help screen: it is shown once help is closed
    if isinstance(event, Say):
        return replace(state, notice=event.text), []
    if isinstance(event, News):
        return _news(lesson, state, event)
    if event == "quit":
        return replace(state, outcome="quit"), []
    if event == "help":
        return replace(state, help=not state.help, notice=""), []
    state = replace(state, help=False, notice="")
    step = lesson.steps[state.index]
    return _turn(lesson, state, rules_for(step).handle(step, state.view, event))


def _news(lesson: Lesson, state: WalkState, news: News) -> tuple[WalkState, list[Effect]]:
    """The shell's news: what it records (a check ran, even if the learner has moved on), and
    what it changes on the step it concerns while the learner is still on it."""
    about = lesson.index_of(news.step_id)
    effects: list[Effect] = []
    if about is not None:
        concerned = lesson.steps[about]
        effects += rules_for(concerned).records(concerned, news)
    step = lesson.steps[state.index]
    if state.outcome is not None or step.id != news.step_id:
        return state, effects  # news about a step the learner has left
    state, more = _turn(lesson, state, rules_for(step).news(step, state.view, news))
    return state, effects + more


def _turn(lesson: Lesson, state: WalkState,
          turn: Stay[StepView] | Go) -> tuple[WalkState, list[Effect]]:
    """What a step's rules answered, carried out: stay on it, or leave it."""
    if isinstance(turn, Stay):
        notice = state.notice if turn.notice is None else turn.notice
        return replace(state, view=turn.view, notice=notice), list(turn.effects)
    return go_forward(lesson, state) if turn == "forward" else go_back(lesson, state)


def reached_the_end(lesson: Lesson, state: WalkState) -> bool:
    """The learner went past the last step, or stands on its score screen when it is a quiz
    (whose score is already recorded)."""
    if state.outcome == "finished":
        return True
    step = lesson.steps[state.index]
    return state.index == len(lesson.steps) - 1 and rules_for(step).at_end(step, state.view)


def exercise_on_screen(lesson: Lesson, state: WalkState) -> Exercise | None:
    """The exercise the learner is on, whose file the shell should watch."""
    if state.outcome is not None:
        return None
    step = lesson.steps[state.index]
    return rules_for(step).watched(step, state.view)


def busy(state: WalkState) -> bool:
    """Background work is running whose result the screen is waiting for."""
    return state.view.busy


def choices_on_screen(lesson: Lesson, state: WalkState) -> int:
    """How many choices the screen offers to pick by number: the open question's or prediction's."""
    step = lesson.steps[state.index]
    return rules_for(step).choices(step, state.view)


def screen_kind(lesson: Lesson, state: WalkState) -> Kind:
    """Which table of keys (`gradtutor.bindings`) the screen for `state` answers to."""
    return "help" if state.help else beneath(lesson, state)


def beneath(lesson: Lesson, state: WalkState) -> Kind:
    """The kind of the screen itself, under the help when the help is open."""
    step = lesson.steps[state.index]
    return rules_for(step).keys(step, state.view)
