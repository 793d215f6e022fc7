"""Where the learner is in a lesson: the step on screen and the view of it (where the learner
is on that step), the help, the notice, and how the walk ended. Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # each kind's view is loaded with its rules (`gradtutor.walk.kinds`)
    from typing import TypeAlias

    from gradtutor.walk.demo import DemoView
    from gradtutor.walk.exercise import ExerciseView
    from gradtutor.walk.parsons import ParsonsView
    from gradtutor.walk.predict import PredictView
    from gradtutor.walk.quiz import QuizView
    from gradtutor.walk.rules import SlideView

    StepView: TypeAlias = (SlideView | QuizView | ExerciseView | PredictView | ParsonsView
                           | DemoView)


@dataclass(frozen=True)
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
