"""Pieces the checkers share: named losses (built in the worker) and pure comparisons and
evidence tables (used by the judges in the tutor's process)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradtutor.i18n import msg

if TYPE_CHECKING:
    import random

RTOL = 1.3e-6  # torch.testing's float32 defaults; values travel as float64 lists
ATOL = 1e-5

# Losses by name, so cases stay plain data: each maps a tensor to a scalar tensor.
LOSSES: dict[str, str] = {
    "squares": "(w ** 2).sum()",
    "weighted": "(w * torch.arange(1, w.numel() + 1, dtype=w.dtype).reshape(w.shape)).sum()",
    "cubes-mean": "(w ** 3).mean()",
    "sin": "torch.sin(w).sum()",
}


def signed(rng: random.Random, low: float, high: float, digits: int) -> float:
    """A number away from zero, drawn from `rng`: its sign, then its size
    in [low, high], rounded to `digits` decimals. Every family draws its inputs so, in this
    order, so a seed gives the same inputs wherever it is drawn."""
    return round(rng.choice((-1, 1)) * rng.uniform(low, high), digits)


def seeded_values(rng: random.Random, dims: tuple[int, ...], low: float, high: float,
                  digits: int) -> Any:
    """Nested lists of `dims`' shape, each entry `signed(rng, low, high, digits)`."""
    return nest([signed(rng, low, high, digits) for _ in range(math.prod(dims))], dims)


def nest(numbers: list[Any], dims: tuple[int, ...]) -> Any:
    """A flat list as nested lists of the given shape."""
    if len(dims) == 1:
        return numbers
    step = len(numbers) // dims[0]
    return [nest(numbers[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]


def build_loss(name: str) -> Callable[[Any], Any]:
    """The named loss as a function of one tensor (worker side: imports torch)."""
    import torch

    expression = compile(LOSSES[name], f"<loss {name}>", "eval")
    return lambda w: eval(expression, {"torch": torch, "w": w})  # noqa: S307 - our own table


def flat(values: Any) -> list[float] | None:
    """Nested lists of numbers flattened; None for anything that is not such a list."""
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        return [float(values)]
    if isinstance(values, list):
        if all(type(item) in (int, float) for item in values):  # a row (bool is no number)
            return [float(item) for item in values]
        out: list[float] = []
        for item in values:
            inner = flat(item)
            if inner is None:
                return None
            out += inner
        return out
    return None


def close(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """torch.testing.assert_close-style comparison of plain values (same shape, close)."""
    if actual is None or expected is None:
        return actual is None and expected is None
    a, e = flat(actual), flat(expected)
    if a is None or e is None or len(a) != len(e) or shape(actual) != shape(expected):
        return False
    return all((math.isnan(x) and math.isnan(y)) or abs(x - y) <= atol + rtol * abs(y)
               for x, y in zip(a, e, strict=True))


def shape(values: Any) -> tuple[int, ...]:
    if isinstance(values, list):
        return (len(values),) + (shape(values[0]) if values else ())
    return ()


def count(events: list[dict[str, Any]], kind: str) -> int:
    return sum(1 for e in events if e.get("event") == kind)


def fmt(values: Any, digits: int = 4) -> str:
    """A short rendering of plain values for evidence tables."""
    if values is None:
        return "None"
    if isinstance(values, dict):
        name = uncalled(values)
        return (msg("<{name}, not called>", name=name) if name is not None
                else f"<{values.get('not_a_tensor', 'object')}>")
    numbers = flat(values)
    if numbers is None:
        return str(values)[:40]
    if len(numbers) <= 6 and isinstance(values, list):  # whole, in its shape: w of (2, 3) too
        return _nested(values, digits)
    shown = ", ".join(f"{x:.{digits}g}" for x in numbers[:6])
    return f"[{shown}{', ...' if len(numbers) > 6 else ''}]"


def _nested(values: Any, digits: int) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, digits) for v in values) + "]"
    return f"{values:.{digits}g}"


def uncalled(value: Any) -> str | None:
    """The name of the function or method a value is, when the learner's code handed it back
    instead of calling it (`return total.item`); None for anything else."""
    if isinstance(value, dict) and isinstance(value.get("uncalled"), str):
        return str(value["uncalled"])
    return None


def uncalled_words(name: str) -> str:
    """The one way every checker says a function or method was named but never called."""
    return msg("You returned `{name}` itself, a function or method that was never called: "
               "without parentheses after its name, Python hands back the function instead "
               "of running it.", name=name)


def uncalled_lines_words(names: list[str]) -> str:
    """The words for lines of the learner's function that name a method or function without
    calling it: what the observation shows, whichever check it made fail."""
    return msg("A line of your function names {names} without calling it, so that line does "
               "nothing: a function or method runs only with parentheses after its name.",
               names=", ".join(f"`{name[:40]}`" for name in names[:5]))


# The torch calls that compute new numbers from their inputs, as the learner wrote each:
# a returned tensor whose numbers one of these made (`trace.Calls.origin`) was computed by
# the learner's own arithmetic, not handed over by autograd.
ARITHMETIC: dict[str, str] = {
    **dict.fromkeys(("mul", "multiply", "mul_"), "*"),
    **dict.fromkeys(("add", "add_"), "+"),
    **dict.fromkeys(("sub", "subtract", "rsub", "__rsub__", "sub_", "neg", "negative", "neg_"),
                    "-"),
    **dict.fromkeys(("div", "divide", "true_divide", "__rdiv__", "__rtruediv__", "div_"), "/"),
    **dict.fromkeys(("pow", "__rpow__", "pow_", "square"), "**"),
    **dict.fromkeys(("matmul", "__rmatmul__", "mm", "mv"), "@"),
}


def computed_by(origin: Any) -> str | None:
    """The operator (`*`, `-`...) whose arithmetic made a value, from its origin as the worker
    read it (`trace.Calls.origin`); None when arithmetic did not make it (autograd did, or a
    copy of what autograd gave, or nothing the function called)."""
    return ARITHMETIC.get(origin) if isinstance(origin, str) else None
