"""Where the learner is in a lesson: the step on screen and the view of it (where the learner
is on that step), the help, the notice, and how the walk ended. Pure data."""

from __future__ import annotations

from typing import Literal, Protocol

from gradtutor.records import record


class StepView(Protocol):
    """Where the learner is on one step: each kind's rules module defines its own view
    (`gradtutor.walk.kinds`); all the walk needs of any is whether it waits for a run."""

    @property
    def busy(self) -> bool: ...


@record
class WalkState:
    """Step `index` of the lesson is on screen, the learner at `view` of it; `help` shows the
    keys over it; `notice` is one line for the learner (a message, `msg`, translated by the
    shell); `outcome` says how the walk ended, once it has. `watching`: an exercise watched
    alone (`gradtutor watch`), where there is no step to go on or back to, and only quitting
    ends the walk."""

    index: int
    view: StepView
    help: bool = False
    notice: str = ""
    outcome: Literal["quit", "finished"] | None = None
    watching: bool = False
