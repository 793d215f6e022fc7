"""`@record` makes the frozen dataclass that `@dataclass(frozen=True)` makes, without compiling
its methods: the same equality, hash, repr, immutability and construction, and the same
answers from `dataclasses`."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from gradtutor.records import record


@record
class Point:
    """A record with a required field, a default and a default factory."""

    x: int
    label: str = "p"
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class DataPoint:
    """The same fields, made by dataclasses."""

    x: int
    label: str = "p"
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False, repr=False)


@record
class Tagged(Point):
    kind: str = "tagged"


@record
class Pair:
    left: Any
    right: Any = None


@dataclass(frozen=True)
class DataPair:
    left: Any
    right: Any = None


def test_a_record_is_built_compared_and_shown_as_a_frozen_dataclass() -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}), ((1, "q"), {}), ((), {"x": 2, "note": "n"}), ((3,), {"tags": ["a"]})]
    for args, kwargs in calls:
        ours, theirs = Point(*args, **kwargs), DataPoint(*args, **kwargs)
        assert repr(ours) == repr(theirs).replace("DataPoint", "Point")
        assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
        assert ours == Point(*args, **kwargs) and ours != Point(99)
        assert ours == dataclasses.replace(ours, note="other")  # note is not compared
    assert Point(1).tags is not Point(1).tags  # a factory's value for each record
    nan = float("nan")
    assert Pair(nan) == Pair(nan) and DataPair(nan) == DataPair(nan)  # compared as tuples
    assert hash(Pair(1, (2,))) == hash(DataPair(1, (2,)))
    assert {Pair(1), Pair(1), Pair(2)} == {Pair(1), Pair(2)}
    assert Pair(1).__eq__(DataPair(1)) is NotImplemented  # another class is never equal
    assert Point(1) != Tagged(1)
    assert Pair.__match_args__ == ("left", "right")
    looped = Pair([])
    looped.left.append(looped)
    assert repr(looped) == "Pair(left=[...], right=None)"


def test_a_record_cannot_be_changed_and_survives_copies() -> None:
    point = Tagged(1, tags=["a"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.label
    assert dataclasses.replace(point, kind="k") == Tagged(1, tags=["a"], kind="k")
    assert [f.name for f in dataclasses.fields(Tagged)] == ["x", "label", "tags", "note", "kind"]
    assert pickle.loads(pickle.dumps(point)) == point == copy.deepcopy(point)


@pytest.mark.parametrize(("args", "kwargs", "error"), [
    ((), {}, "Point() missing required argument: 'x'"),
    ((1, "a", [], "n", 5), {}, "Point() takes 4 positional arguments but 5 were given"),
    ((1,), {"y": 2}, "Point() got an unexpected keyword argument 'y'"),
    ((1,), {"x": 2}, "Point() got multiple values for argument 'x'"),
])
def test_a_record_refuses_the_arguments_a_dataclass_refuses(
        args: tuple[Any, ...], kwargs: dict[str, Any], error: str) -> None:
    with pytest.raises(TypeError) as raised:
        Point(*args, **kwargs)
    assert str(raised.value) == error
    with pytest.raises(TypeError):
        DataPoint(*args, **kwargs)


def test_what_a_record_cannot_be_is_refused_where_it_is_defined() -> None:
    with pytest.raises(TypeError, match="keyword-only"):
        @record
        class Keyword:
            x: int = field(kw_only=True)

    with pytest.raises(TypeError, match="__post_init__"):
        @record
        class Checked:
            x: int

            def __post_init__(self) -> None: ...
