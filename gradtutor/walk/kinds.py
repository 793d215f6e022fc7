"""The table of step kinds: where the rules each kind of step follows in the walkthrough are
kept, a module of this package named as the kind, whose rules are named `RULES`.
docs/authoring.md lists every table a new kind of step is entered in; tests/test_step_kinds.py
fails on a kind one of them misses.

A kind's module is imported when a lesson first reaches a step of that kind, so a lesson that
opens on a slide loads none of the others' rules, views and records.
"""

from __future__ import annotations

import importlib
from typing import Any, cast, get_args

from gradtutor.lessons.model import Step, kind_of
from gradtutor.walk.rules import StepRules

# Each kind's rules are in the module named as its `kind:` is (walk/slide.py, walk/quiz.py, ...).
MODULES: dict[type[Step], str] = {t: f"gradtutor.walk.{kind_of(t)}" for t in get_args(Step)}


def rules_for(step: Step) -> StepRules[Any, Any]:
    """The rules of `step`'s kind."""
    return cast(StepRules[Any, Any], importlib.import_module(MODULES[type(step)]).RULES)
