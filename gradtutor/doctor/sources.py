"""The names a training script calls (`self.aux(h)`, `adapter(x)`), read from its source
without running it: a layer the run never called, but the code calls somewhere, sits on a
branch not taken (switched off, perhaps on purpose); one the code never calls is forgotten.
"""

from __future__ import annotations

import ast

MAX_NAMES = 2000  # names told at most (a script is not that long; a generated one may be)


def called_names(source: str) -> set[str]:
    """The names and attributes the source calls (`f(...)`, `x.f(...)`); none if the source
    is not Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                found.add(func.attr)
            elif isinstance(func, ast.Name):
                found.add(func.id)
    return found
