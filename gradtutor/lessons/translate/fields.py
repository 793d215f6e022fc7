"""Which texts of a lesson are translated, and how each is named: by its step and its field
path (`body`, `hints.2`, `questions.q3.choices.b.why`). Each field of the model says what a
translation does with it (its "translate" role, `lessons/model.py`); the tables here are
derived from those roles, by record type. Everything that is no text (code, ids, answer keys,
settings) is kept as written. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from gradtutor.lessons import model
from gradtutor.lessons.model import LETTERS, Lesson
from gradtutor.lessons.schema import key_of
from gradtutor.lessons.translate.shape import has_comment

T = TypeVar("T")


def _by_id(_: int, item: Any) -> str:
    return str(item.id)


def _by_letter(index: int, _: Any) -> str:
    return LETTERS[index]


def _by_number(index: int, _: Any) -> str:
    return str(index + 1)


# How an item of a list is named in a field path, by the list's role.
NAMERS: dict[str, Callable[[int, Any], str]] = {
    "by id": _by_id, "by letter": _by_letter, "by number": _by_number}
# Every role a field of the model may take (model.py's TRANSLATED, AS_WRITTEN, ...).
ROLES = frozenset({"prose", "kept", "code", "starter", "nested", *NAMERS})
# The model's records, each with its fields' roles.
RECORDS: dict[type, dict[str, str]] = {
    record: {f.name: f.metadata.get("translate", "") for f in dataclasses.fields(record)}
    for record in vars(model).values()
    if isinstance(record, type) and dataclasses.is_dataclass(record)
    and record.__module__ == model.__name__}


def _fields_of(*roles: str) -> dict[type, tuple[str, ...]]:
    """The fields of each record whose role is one of `roles` (records with none left out)."""
    table = {record: tuple(name for name, role in fields.items() if role in roles)
             for record, fields in RECORDS.items()}
    return {record: names for record, names in table.items() if names}


# Which fields of each record hold prose (a starter is always a text to translate, its TODOs).
PROSE = _fields_of("prose", "starter")
# Lists whose items hold prose, and how an item is named in a field path: questions, mutants
# and parsons lines by id, choices by letter, hints by number (1, 2, ...).
ITEMS: dict[type, dict[str, Callable[[int, Any], str]]] = {
    record: {name: NAMERS[RECORDS[record][name]] for name in names}
    for record, names in _fields_of(*NAMERS).items()}
# Code whose comments are translated: the translation must be the same code, token for token,
# with only its comments changed (`same_code`); otherwise the English is shown. A starter is
# always a text to translate (its TODOs); shown code only when it has a comment to translate.
COMMENTED_CODE = _fields_of("code", "starter")
# A single record inside another that holds prose.
NESTED = _fields_of("nested")
# Kept exactly as written in every language: code, identifiers, answer keys, settings.
KEPT = _fields_of("kept")


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
