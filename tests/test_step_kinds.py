"""A kind of step is one record in `lessons.model.Step` and one entry in each per-kind table.
This module checks every table has an entry for every kind, so a kind added to `Step` and
forgotten in a table fails here by name, not with a KeyError in front of a learner. (What a
translation does with each of its fields is on the record itself: tests/test_translate.py.)"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Mapping

import pytest

from gradtutor.bindings import TABLES, Kind
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import PROOFS
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Step
from gradtutor.lessons.timing import EFFORT
from gradtutor.ui.step_screens import SCREENS
from gradtutor.walk.kinds import MODULES, rules_for
from gradtutor.walk.rules import StepRules

STEP_TYPES = typing.get_args(Step)

# Every table keyed by the type of a step: where a new kind of step must be entered.
PER_KIND: dict[str, Mapping[type, object]] = {
    "lessons.timing.EFFORT": EFFORT,
    "checking.lesson_proofs.PROOFS": PROOFS,
    "walk.kinds.MODULES": MODULES,
    "ui.step_screens.SCREENS": SCREENS,
}


@pytest.mark.parametrize("table", PER_KIND)
def test_every_kind_of_step_has_an_entry_in_each_per_kind_table(table: str) -> None:
    missing = [t.__name__ for t in STEP_TYPES if t not in PER_KIND[table]]
    assert missing == [], f"{table} has no entry for {missing}"


def test_each_kind_of_step_opens_on_a_screen_that_has_keys() -> None:
    """Every kind's rules module holds its `RULES`, and a step of the kind, as the bundled
    course has one, opens on a screen whose keys `bindings.TABLES` lists."""
    assert set(typing.get_args(Kind)) == set(TABLES)
    for step_type, module in MODULES.items():
        assert isinstance(importlib.import_module(module).RULES, StepRules), step_type
    course = load_course(rules=EXERCISE_RULES)
    steps = {type(step): step for lesson in course.lessons for step in lesson.steps}
    assert set(steps) == set(STEP_TYPES)  # the course shows every kind
    for step in steps.values():
        rules = rules_for(step)
        assert rules.keys(step, rules.open(step)) in TABLES, type(step).__name__
