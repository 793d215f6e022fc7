"""Lesson text made safe to show in a terminal, as learner output is. Pure.

A lesson file can hold control characters (YAML's "\\e", "\\a", "\\x9b" escapes): printed raw,
they would retitle the window, clear the screen or fake the tutor's own lines. Every string in
a loaded lesson passes through `neutralise` once, after loading: ESC is shown as `\\x1b`,
newlines and tabs stay. Inside a Python string literal that spelling means the same
character, so code that runs (a snippet, a starter) keeps its meaning.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, TypeVar

from gradtutor.ui.safe_text import neutralise

_T = TypeVar("_T")

# What `neutralise` rewrites: C0 controls but tab and newline, DEL and C1, and the invisible
# characters that reorder text; found in one scan, so clean text costs one search per string.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069\u2028\u2029]")


def neutralised(value: _T) -> _T:
    """`value` (a lesson, a step, any part of the model, a tuple of them) with every string in
    it neutralised; the same object when there was nothing to change."""
    return _clean(value)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return neutralise(value) if _UNSAFE.search(value) else value
    if isinstance(value, tuple):
        items = tuple(_clean(item) for item in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    kind: type = type(value)
    names = _field_names(kind)
    if names:
        changes = {}
        for name in names:
            old = getattr(value, name)
            new = _clean(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass (none for any other type), looked up once per type: a lesson
    has hundreds of records of a dozen types."""
    return tuple(spec.name for spec in dataclasses.fields(kind)) if dataclasses.is_dataclass(
        kind) else ()
