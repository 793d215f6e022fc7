"""Where a training script switches a model to evaluation (`model.eval()`,
`model.train(False)`), read from its source without running it: the doctor says that a run it
stopped early did not reach the script's evaluation only when the script has one.
"""

from __future__ import annotations

import ast


def evaluation_lines(source: str) -> list[int]:
    """The lines that call `.eval()` without arguments or `.train(False)`
    (`.train(mode=False)`); none if the source is not Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        evaluates = node.func.attr == "eval" and not node.args and not node.keywords
        if evaluates or node.func.attr == "train" and _false(
                [*node.args, *(k.value for k in node.keywords if k.arg == "mode")]):
            found.add(node.lineno)
    return sorted(found)


def _false(values: list[ast.expr]) -> bool:
    return len(values) == 1 and isinstance(values[0], ast.Constant) and values[0].value is False
