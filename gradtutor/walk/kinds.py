"""The table of step kinds: the rules each kind of step follows in the walkthrough. A new kind
of step is one entry here, and one in `gradtutor.ui.step_screens.SCREENS`, which draws it."""

from __future__ import annotations

from typing import Any

from gradtutor.lessons.model import Demo, Exercise, Parsons, Predict, Quiz, Slide, Step
from gradtutor.walk.demo import DemoRules
from gradtutor.walk.exercise import ExerciseRules
from gradtutor.walk.parsons import ParsonsRules
from gradtutor.walk.predict import PredictRules
from gradtutor.walk.quiz import QuizRules
from gradtutor.walk.rules import SlideRules, StepRules

RULES: dict[type[Step], StepRules[Any, Any]] = {
    Slide: SlideRules(),
    Quiz: QuizRules(),
    Exercise: ExerciseRules(),
    Predict: PredictRules(),
    Parsons: ParsonsRules(),
    Demo: DemoRules(),
}


def rules_for(step: Step) -> StepRules[Any, Any]:
    """The rules of `step`'s kind."""
    return RULES[type(step)]
