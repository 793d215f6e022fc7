"""An input family is one module of `gradtutor/checking/checkers/` that registers its whole
`Family` as its `FAMILY`, and one line of `families.FAMILIES`. This module checks the table
and the modules agree, so a family module left out of the table, or a table entry made
anywhere but in a module of its own, fails here by name instead of in front of an author."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from gradtutor.checking import checkers
from gradtutor.checking.checkers.families import FAMILIES
from gradtutor.checking.checkers.family import Family


def checker_modules() -> dict[str, ModuleType]:
    """Every module of the checkers package, by its name."""
    return {info.name: importlib.import_module(f"{checkers.__name__}.{info.name}")
            for info in pkgutil.iter_modules(checkers.__path__)}


def test_every_family_module_is_registered_and_every_family_has_a_module_of_its_own() -> None:
    modules = checker_modules()
    owners = {name: [module for module, found in modules.items()
                     if getattr(found, "FAMILY", None) is family]
              for name, family in FAMILIES.items()}
    assert {name: found for name, found in owners.items() if len(found) != 1} == {}, (
        "each family in FAMILIES is the FAMILY of exactly one module")
    registered = {found for found, in owners.values()}
    assert len(registered) == len(FAMILIES), "two names in FAMILIES for one module's FAMILY"
    defining = {module for module, found in modules.items()
                if isinstance(getattr(found, "FAMILY", None), Family)}
    assert sorted(defining - registered) == [], "modules whose FAMILY is not in FAMILIES"


def test_a_family_module_registers_one_family_and_others_none() -> None:
    """A module holds at most one `Family`, and it is named `FAMILY`: two families in one module
    (or a `Family` built in the table) would not be a module each."""
    for module, found in checker_modules().items():
        families = [name for name, value in vars(found).items() if isinstance(value, Family)]
        assert families in ([], ["FAMILY"]), (module, families)


def test_the_cases_a_family_holds_in_every_seed_are_there_in_every_seed() -> None:
    """`Family.fixed`: what a declared check may name in `needs`, held to 500 seeds."""
    held = {name: family for name, family in FAMILIES.items() if family.fixed}
    assert {"gradient-kinds", "clip-step", "evaluation"} <= set(held)
    for name, family in held.items():
        for seed in range(500):
            drawn = family.cases(seed)
            missing = [case for case, holds in family.fixed.items() if not holds(drawn)]
            assert not missing, f"{name}, seed {seed}: no {missing} case"


def test_a_check_that_needs_a_case_its_family_does_not_hold_is_refused() -> None:
    import dataclasses

    from gradtutor.checking.checkers.declared import exercise_problems
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    health = load_course(None, rules=EXERCISE_RULES).exercises()["grad-health"]
    assert exercise_problems(health) == []
    check = dataclasses.replace(health.checks[-1], needs=("some-zero", "half-zero"))
    broken = dataclasses.replace(health, checks=(*health.checks[:-1], check))
    problems = exercise_problems(broken)
    assert len(problems) == 1 and "'half-zero' is not a case" in problems[0][0]
    assert problems[0][1] == ("checks", len(health.checks) - 1, "needs", 1)
