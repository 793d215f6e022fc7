"""Plain data -> frozen dataclasses, with every problem collected rather than the first.

A small, typed validator for the lesson model. It exists instead of a general library
because the lesson model is loaded before every slide is shown, and importing and building
a general validation library costs more than the whole UI start-up budget.

A field's rules sit in its metadata (see `rules`); its Python type says the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from typing import Any, Literal, TypeVar, Union

from gradtutor.records import record

Loc = tuple[str | int, ...]
T = TypeVar("T")


@record
class Issue:
    """One validation problem: what went wrong, where, and the details a message needs."""

    kind: str  # unknown_key, missing, type, pattern, too_short, too_long, empty, range, tag
    loc: Loc
    detail: dict[str, Any]


def rules(*, pattern: str | None = None, min_items: int | None = None,
          max_items: int | None = None, nonempty: bool = False, ge: float | None = None,
          gt: float | None = None, le: float | None = None, max_chars: int | None = None,
          key: str | None = None, what: str = "") -> dict[str, Any]:
    """Field metadata: constraints on a value, and the YAML key when it differs from the name."""
    return {"pattern": pattern, "min_items": min_items, "max_items": max_items,
            "nonempty": nonempty, "ge": ge, "gt": gt, "le": le, "max_chars": max_chars,
            "key": key, "what": what}


def key_of(field: dataclasses.Field[Any]) -> str:
    return field.metadata.get("key") or field.name


def keys_of(cls: type) -> list[str]:
    return [key_of(f) for f in dataclasses.fields(cls)]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=False)


def _options(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return typing.get_args(annotation)
    return (annotation,)


@functools.cache
def _tagged(options: tuple[Any, ...]) -> dict[str, Any]:
    """A union of step classes by their `kind` tags (empty if the union is not of steps)."""
    return {tag: o for o in options if (tag := _kind_tag(o)) is not None}


@functools.cache
def _record(cls: type) -> tuple[tuple[tuple[str, str, Any, Any, bool], ...], frozenset[str]]:
    """A dataclass's fields, each as (name, key it is written with, type, metadata, whether it
    is required), and the set of those keys."""
    hints = _hints(cls)
    fields = tuple((f.name, key_of(f), hints[f.name], f.metadata,
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
                   for f in dataclasses.fields(cls))
    return fields, frozenset(key for _, key, _, _, _ in fields)


def _kind_tag(cls: type) -> str | None:
    """The `kind` literal of a step class, if it has one."""
    hint = _hints(cls).get("kind") if dataclasses.is_dataclass(cls) else None
    if hint is not None and typing.get_origin(hint) is Literal:
        return str(typing.get_args(hint)[0])
    return None


def build(cls: type[T], data: Any, loc: Loc = ()) -> tuple[T | None, list[Issue]]:
    """An instance of dataclass `cls` from plain data, or None and every issue found."""
    issues: list[Issue] = []
    value = _convert(cls, data, loc, {}, issues)
    return (value if not issues else None), issues


def _convert(annotation: Any, value: Any, loc: Loc, meta: dict[str, Any] | typing.Mapping[str, Any],
             issues: list[Issue]) -> Any:
    shape, of = _shape(annotation)
    if shape == "union":
        return _convert_union(of, value, loc, meta, issues)
    if shape == "none":
        if value is not None:
            issues.append(Issue("type", loc, {"want": "empty", "got": value}))
        return None
    if shape == "literal":
        if value not in of:
            issues.append(Issue("literal", loc, {"allowed": of, "got": value}))
        return value
    if shape == "list":
        return _convert_list(of, value, loc, meta, issues)
    if shape == "record":
        return _convert_record(of, value, loc, issues)
    return _convert_scalar(of, value, loc, meta, issues)


@functools.cache
def _shape(annotation: Any) -> tuple[str, Any]:
    """What kind of value an annotation asks for, and what `_convert` needs to convert one:
    worked out once per annotation (a lesson has thousands of values and a few dozen)."""
    options = _options(annotation)
    if len(options) > 1:
        return "union", options
    annotation = options[0]
    origin = typing.get_origin(annotation)
    if annotation is type(None):
        return "none", None
    if origin is Literal:
        return "literal", typing.get_args(annotation)
    if origin in (list, tuple):
        return "list", typing.get_args(annotation)[0]
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return "record", annotation
    return "scalar", annotation


def _convert_union(options: tuple[Any, ...], value: Any, loc: Loc,
                   meta: typing.Mapping[str, Any], issues: list[Issue]) -> Any:
    if value is None and type(None) in options:
        return None
    options = tuple(o for o in options if o is not type(None))
    tagged = _tagged(options)
    if tagged:  # a step: the `kind` key picks the class
        if not isinstance(value, dict):
            issues.append(Issue("type", loc, {"want": "mapping", "got": value}))
            return None
        if "kind" not in value:
            issues.append(Issue("missing_kind", loc, {"allowed": tuple(tagged)}))
            return None
        kind = value["kind"]
        if not isinstance(kind, str) or kind not in tagged:
            issues.append(Issue("unknown_kind", loc + ("kind",), {"allowed": tuple(tagged),
                                                                  "got": kind}))
            return None
        return _convert(tagged[kind], value, loc, meta, issues)
    # An untagged union such as `str | list[str]`: the first option the value's shape fits.
    for option in options:
        shape = typing.get_origin(option) or option
        shape = list if shape is tuple else shape  # YAML sequences arrive as lists
        shape = dict if dataclasses.is_dataclass(shape) else shape
        if isinstance(value, shape) and not (shape is int and isinstance(value, bool)):
            return _convert(option, value, loc, meta, issues)
    issues.append(Issue("type", loc, {"want": " or ".join(_word(o) for o in options),
                                      "got": value}))
    return None


def _convert_list(item: Any, value: Any, loc: Loc, meta: typing.Mapping[str, Any],
                  issues: list[Issue]) -> Any:
    if not isinstance(value, list):
        issues.append(Issue("type", loc, {"want": "list", "got": value}))
        return None
    if meta.get("min_items") is not None and len(value) < meta["min_items"]:
        issues.append(Issue("too_short", loc, {"min": meta["min_items"], "got": len(value)}))
    if meta.get("max_items") is not None and len(value) > meta["max_items"]:
        issues.append(Issue("too_long", loc, {"max": meta["max_items"], "got": len(value)}))
    item_meta = {k: v for k, v in meta.items() if k not in ("min_items", "max_items")}
    return tuple(_convert(item, v, loc + (i,), item_meta, issues) for i, v in enumerate(value))


def _convert_record(cls: type, value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if not isinstance(value, dict):
        issues.append(Issue("type", loc, {"want": "mapping", "got": value}))
        return None
    before = len(issues)
    fields, known = _record(cls)
    for key in value:
        if key not in known:
            issues.append(Issue("unknown_key", loc + (key,), {"allowed": keys_of(cls)}))
    kwargs: dict[str, Any] = {}
    for name, key, hint, metadata, required in fields:
        if key not in value:
            if required:
                issues.append(Issue("missing", loc, {"key": key}))
            continue
        kwargs[name] = _convert(hint, value[key], loc + (key,), metadata, issues)
    if len(issues) > before:
        return None
    return cls(**kwargs)


_SCALARS: dict[type, tuple[type, ...]] = {str: (str,), int: (int,), float: (int, float),
                                          bool: (bool,)}


def _word(annotation: Any) -> str:
    if typing.get_origin(annotation) in (list, tuple):
        return "list"
    words = {str: "text", int: "integer", float: "number", bool: "boolean"}
    return words.get(annotation, "mapping")


def _within(value: float, bound: str, limit: float) -> bool:
    if bound == "ge":
        return value >= limit
    if bound == "gt":
        return value > limit
    return value <= limit


def _convert_scalar(annotation: Any, value: Any, loc: Loc, meta: typing.Mapping[str, Any],
                    issues: list[Issue]) -> Any:
    accepted = _SCALARS.get(annotation, (annotation,))
    if not isinstance(value, accepted) or (annotation is not bool and isinstance(value, bool)):
        issues.append(Issue("type", loc, {"want": _word(annotation), "got": value}))
        return None
    if isinstance(value, str):
        if meta.get("nonempty") and not value.strip():
            issues.append(Issue("empty", loc, {}))
        elif meta.get("pattern") and not re.fullmatch(meta["pattern"], value):
            issues.append(Issue("pattern", loc, {"got": value, "what": meta.get("what", "")}))
        elif meta.get("max_chars") and len(value) > meta["max_chars"]:
            issues.append(Issue("too_many_chars", loc, {"max": meta["max_chars"],
                                                        "got": len(value)}))
        return value
    for bound in ("ge", "gt", "le"):
        limit = meta.get(bound)
        if limit is not None and not _within(value, bound, limit):
            issues.append(Issue("range", loc, {"bound": bound, "limit": limit, "got": value}))
    return float(value) if annotation is float else value
