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
