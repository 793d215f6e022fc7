"""What an input family is: the `Family` record each family module registers as its `FAMILY`
(`families.py` collects them), and the types of the facts it gives.

A family is the only Python a declared exercise (`declared.py`) rests on, and families are
shared: every exercise that hands the learner a fresh leaf and a loss uses `fresh-leaf`. Its
worker side (`cases`, `reference`, `observe`) imports torch inside its functions and runs in
the worker; its tutor side (`facts`, `columns`, `explainers`, `tables`) is pure and runs in the
tutor's process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gradtutor.checking.verdict import Table

Facts = dict[str, Any]
Data = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]  # (case, reference, observed)
# An explainer words why a fact of the first failing case is wrong: (facts of that case, the
# plain data they came from, the fact's name, the subject the rule gives, e.g. "You
# returned") -> a message.
Explainer = Callable[[Facts, Data, str, str], str]

# What PyTorch raises for a second backward through a graph it already freed: a family that
# `catches` it reports its first sentence as the fact `graph-freed` instead of an error.
CATCHABLE: Mapping[str, str] = {
    "graph-freed": "Trying to backward through the graph a second time",
}


def no_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A family whose evidence tables start with no columns of their own."""
    return (), ()


@dataclass(frozen=True)
class Family:
    """One input family. Worker side: `cases(seed)` (plain data, no torch), `reference(case)`
    (facts of the inputs themselves, with torch, e.g. the true gradient), `observe(case, fn,
    trace, catches)` (calls the learner's or the solution's function; plain data back).
    Tutor side: `facts(case, reference, observed, parts)` (every fact a check may name, from
    plain data; `parts` names the values of a returned tuple, e.g. ("before", "after")),
    `names(parts)` (those facts' names, which `validate` holds conditions to), `columns(case)`
    (the evidence columns every table of columns starts with), `explainers`, `tables`
    (evidence tables of many rows, by name, from (case, reference, observed)) and `order`
    (which case a failing check shows first: the one that explains the most)."""

    arity: int
    names: Callable[[tuple[str, ...]], frozenset[str]]
    cases: Callable[[int], list[dict[str, Any]]]
    reference: Callable[[dict[str, Any]], dict[str, Any]]
    observe: Callable[[dict[str, Any], Any, Any, tuple[str, ...]], dict[str, Any]]
    facts: Callable[[dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]], Facts]
    columns: Callable[[dict[str, Any]], tuple[tuple[str, ...], tuple[str, ...]]] = no_columns
    explainers: Mapping[str, Explainer] = field(default_factory=dict)
    tables: Mapping[str, Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Table]] = (
        field(default_factory=dict))
    # the order in which cases are judged, by their facts: lower first (default: as drawn)
    order: Callable[[Facts], int] = lambda facts: 0
    valued: frozenset[str] = frozenset()  # explainers that explain the fact a rule names
    # The cases every seed holds, by name: each a test of one seed's cases (tests/test_families
    # holds each to 500 seeds). A declared check names those it needs (`needs`), so that the
    # mistake it exists to catch is told apart on every seed, not only on the lucky ones.
    fixed: Mapping[str, Callable[[list[dict[str, Any]]], bool]] = field(default_factory=dict)
