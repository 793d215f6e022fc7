"""The table of step kinds: where the rules each kind of step follows in the walkthrough are
kept (each module names its rules `RULES`). docs/authoring.md lists every table a new kind of
step is entered in; tests/test_step_kinds.py fails on a kind one of them misses.

A kind's module is imported when a lesson first reaches a step of that kind, so a lesson that
opens on a slide loads none of the others' rules, views and records.
"""

from __future__ import annotations

import importlib
from typing import Any, cast

from gradtutor.lessons.model import Demo, Exercise, Parsons, Predict, Quiz, Slide, Step
from gradtutor.walk.rules import StepRules

MODULES: dict[type[Step], str] = {
    Slide: "gradtutor.walk.rules",
    Quiz: "gradtutor.walk.quiz",
    Exercise: "gradtutor.walk.exercise",
    Predict: "gradtutor.walk.predict",
    Parsons: "gradtutor.walk.parsons",
    Demo: "gradtutor.walk.demo",
}


def rules_for(step: Step) -> StepRules[Any, Any]:
    """The rules of `step`'s kind."""
    return cast(StepRules[Any, Any], importlib.import_module(MODULES[type(step)]).RULES)
