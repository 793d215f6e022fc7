"""The `values-fn` input family (`FAMILY`, registered in `families.py`): the function gets a
list of Python numbers and returns one value, described as `tensor_facts.py` describes what a
`leaf-fn` function returns (a tensor or a Python number, its dtype, shape, grad_fn ...).

`values_cases` and `observe_values_fn` run in the worker (torch imported inside); the facts and
columns are pure.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import signed
from gradtutor.checking.checkers.family import Family
from gradtutor.checking.checkers.tensor_facts import (
    RETURNED_FACTS,
    call,
    described,
    no_reference,
    returned_facts,
)

VALUES_FN_FACTS = RETURNED_FACTS | {"values"}


def values_cases(seed: int) -> list[dict[str, Any]]:
    """Four lists of two to five Python numbers; one of them, somewhere, holds whole numbers
    as ints (`[3, -1, 2]`), as a config file or a hand-typed list gives them, so a function
    that trusts the values to be floats is caught on every seed."""
    import random

    rng = random.Random(seed)
    out = []
    whole = rng.randrange(4)
    for i in range(4):
        size = rng.randint(2, 5)
        if i == whole:
            numbers: list[float] = [rng.choice((-1, 1)) * rng.randint(1, 9) for _ in range(size)]
        else:
            numbers = [signed(rng, 0.1, 9.0, 2) for _ in range(size)]
        out.append({"values": numbers})
    return out


def observe_values_fn(case: dict[str, Any], fn: Any, trace: Any,
                      catches: tuple[str, ...] = ()) -> dict[str, Any]:
    """fn(values) on a fresh copy of the case's list: the returned value described."""
    returned, grad_enabled = call(fn, list(case["values"]))
    return {**described(trace, returned), "grad_enabled_after": grad_enabled}


def values_fn_facts(case: dict[str, Any], reference: dict[str, Any],
                    observed: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any]:
    return {**returned_facts(observed), "values": case["values"]}


def values_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("values",), (str(case["values"]),)


FAMILY = Family(arity=1, names=lambda parts: VALUES_FN_FACTS, cases=values_cases,
                reference=no_reference, observe=observe_values_fn, facts=values_fn_facts,
                columns=values_columns)
