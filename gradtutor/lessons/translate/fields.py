"""Which texts of a lesson are translated, and how each is named: by its step and its field
path (`body`, `hints.2`, `questions.q3.choices.b.why`). The tables are keyed by the model's
record types; everything else (code, ids, answer keys, settings) is kept as written. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from gradtutor.lessons.model import (
    LETTERS,
    Chart,
    Choice,
    Column,
    DeclaredCheck,
    Demo,
    Exercise,
    Lesson,
    Mutant,
    Parsons,
    ParsonsLine,
    ParsonsRun,
    Predict,
    Proof,
    Question,
    Quiz,
    Replacement,
    Rule,
    Slide,
)
from gradtutor.lessons.schema import key_of
from gradtutor.lessons.translate.shape import has_comment

T = TypeVar("T")

# Which fields of each model record hold prose. A record type added to the model stays English
# until it is listed here; tests/test_translate.py names the fields no table lists.
PROSE: dict[type, tuple[str, ...]] = {
    Lesson: ("title", "summary"),
    Slide: ("title", "body", "notes"),
    Quiz: ("title", "intro"),
    Question: ("prompt",),
    Choice: ("text", "why"),
    Exercise: ("title", "prompt", "starter", "why"),
    Mutant: ("mistake",),
    Predict: ("title", "prompt"),
    Parsons: ("title", "prompt"),
    ParsonsLine: ("why",),
    Demo: ("title", "body"),
    Chart: ("title", "x_label", "y_label"),
    DeclaredCheck: ("pass_", "help", "unjudged"),
    Rule: ("say", "subject", "help"),
    Column: ("title",),
}


def _by_id(_: int, item: Any) -> str:
    return str(item.id)


def _by_letter(index: int, _: Any) -> str:
    return LETTERS[index]


def _by_number(index: int, _: Any) -> str:
    return str(index + 1)


# Lists whose items hold prose, and how an item is named in a field path: questions, mutants
# and parsons lines by id, choices by letter, hints by number (1, 2, ...).
ITEMS: dict[type, dict[str, Callable[[int, Any], str]]] = {
    Quiz: {"questions": _by_id},
    Question: {"choices": _by_letter},
    Exercise: {"hints": _by_number, "mutants": _by_id, "checks": _by_id},
    DeclaredCheck: {"fail": _by_number, "skip": _by_number, "evidence": _by_number},
    Predict: {"choices": _by_letter},
    Parsons: {"lines": _by_id},
}
# Code whose comments are translated: the translation must be the same code, token for token,
# with only its comments changed (`same_code`); otherwise the English is shown. A starter is
# always a text to translate (its TODOs); shown code only when it has a comment to translate.
COMMENTED_CODE: dict[type, tuple[str, ...]] = {
    Exercise: ("starter",), Slide: ("code",), Predict: ("code",), Question: ("code",),
    Demo: ("code",)}
# A single record inside another that holds prose.
NESTED: dict[type, tuple[str, ...]] = {Demo: ("chart",)}
# Kept exactly as written in every language: code, identifiers, answer keys, settings.
KEPT: dict[type, tuple[str, ...]] = {
    Lesson: ("id", "order", "steps", "minutes"),
    Slide: ("kind", "id", "optional"),
    Quiz: ("kind", "id", "pass_mark"),
    Question: ("id", "answer"),
    Choice: ("proof",),  # code the learner never sees, run by `gradtutor validate`
    Proof: ("holds", "code"),
    Exercise: ("kind", "id", "checker", "function", "solution", "timeout", "optional",
               "inputs", "catches", "returns"),
    DeclaredCheck: ("id", "expect", "after", "table"),
    Rule: ("when", "explain", "value"),
    Column: ("shows",),
    Mutant: ("id", "replace", "fails"),
    Replacement: ("find", "with_"),
    Predict: ("kind", "id", "show", "answer", "optional"),
    Parsons: ("kind", "id", "solution", "run", "optional"),
    ParsonsLine: ("id", "code", "after"),
    ParsonsRun: ("setup", "record", "series", "repeat"),
    Demo: ("kind", "id", "optional"),
    Chart: ("series",),
}


class FieldKey(NamedTuple):
    """One translatable text: its step id (None for the lesson's own title and summary) and
    its field path in that step, such as `body`, `hints.2` or `questions.q3.choices.b.why`."""

    step: str | None
    path: str

    def __str__(self) -> str:
        return f"lesson {self.path}" if self.step is None else f"step {self.step} {self.path}"


def is_text(kind: type, name: str, value: Any) -> bool:
    """Whether field `name` of a `kind` record, holding `value`, is a text to translate: prose,
    or shown code with a comment in it."""
    if not isinstance(value, str):
        return False
    return name in PROSE.get(kind, ()) or (name in COMMENTED_CODE.get(kind, ())
                                           and has_comment(value))


def texts_of(record: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(field path, English text) of every translatable text in a step, or in a lesson's
    own fields (its steps are not included), in the order the fields are declared."""
    kind = type(record)
    items = ITEMS.get(kind, {})
    for field in dataclasses.fields(record):
        name, value = field.name, getattr(record, field.name)
        if is_text(kind, name, value):
            yield prefix + key_of(field), value
        elif name in items:
            for index, item in enumerate(value):
                path = f"{prefix}{name}.{items[name](index, item)}"
                if isinstance(item, str):
                    yield path, item
                else:
                    yield from texts_of(item, path + ".")
        elif name in NESTED.get(kind, ()) and value is not None:
            yield from texts_of(value, f"{prefix}{name}.")


def lesson_texts(lesson: Lesson) -> Iterator[tuple[FieldKey, str]]:
    """Every translatable text of a lesson: its own, then each step's, in lesson order."""
    for path, text in texts_of(lesson):
        yield FieldKey(None, path), text
    for step in lesson.steps:
        for path, text in texts_of(step):
            yield FieldKey(step.id, path), text


def rebuild(record: T, prefix: str, pick: Callable[[str, str], str]) -> T:
    """`record` with each translatable text replaced by `pick(path, english)`, visited in the
    same order as `texts_of`."""
    kind = type(record)
    items = ITEMS.get(kind, {})
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        name, value = field.name, getattr(record, field.name)
        new: Any = value
        if is_text(kind, name, value):
            new = pick(prefix + key_of(field), value)
        elif name in items:
            rebuilt = tuple(
                pick(path, item) if isinstance(item, str) else rebuild(item, path + ".", pick)
                for index, item in enumerate(value)
                for path in [f"{prefix}{name}.{items[name](index, item)}"])
            if any(n is not o for n, o in zip(rebuilt, value, strict=True)):
                new = rebuilt
        elif name in NESTED.get(kind, ()) and value is not None:
            new = rebuild(value, f"{prefix}{name}.", pick)
        if new is not value:
            changes[name] = new
    return dataclasses.replace(record, **changes) if changes else record  # type: ignore[type-var]
