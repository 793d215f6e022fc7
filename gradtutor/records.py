"""Frozen records: dataclasses whose methods are made without compiling any code.

`@dataclass(frozen=True)` writes the source of six methods for every class it makes
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`) and compiles
each with `exec`, at import: some 0.3-0.7 ms a class on Python 3.11, which the seventy-odd
records that `gradtutor start` imports before its first slide turned into 20-40 ms of it.
`@record` makes the same dataclass (`dataclasses.fields`, `replace` and `asdict` work on it;
equality, hash, repr, immutability and `__match_args__` are a frozen dataclass's) from
methods written once here, each closed over its class's fields.

What it leaves out, it refuses at the class's definition: keyword-only fields, fields not in
`__init__`, `__post_init__` (so `InitVar`s too; use `@dataclass(frozen=True)` for those), and
a `__setattr__` or `__delattr__` of the class's own. A record's base classes are records or
plain classes, never a `@dataclass(frozen=True)` (dataclasses refuses that mix too).
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_options: Any) -> Callable[[_T], _T]:
        return lambda decorator: decorator


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving the values of the attributes `names` of an object, as a tuple."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        (name,) = names
        return lambda obj: (getattr(obj, name),)
    return lambda obj: ()


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    names = tuple(field.name for field in fields)
    known = frozenset(names)
    defaults = {field.name: field.default for field in fields
                if field.default is not dataclasses.MISSING}
    factories = {field.name: field.default_factory for field in fields
                 if field.default_factory is not dataclasses.MISSING}
    put = object.__setattr__
    called = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807 - the method
        if len(args) > len(names):
            raise TypeError(f"{called}() takes {len(names)} positional arguments but "
                            f"{len(args)} were given")
        for key in kwargs:
            if key not in known:
                raise TypeError(f"{called}() got an unexpected keyword argument {key!r}")
        for index, name in enumerate(names):
            if index < len(args):
                if name in kwargs:
                    raise TypeError(f"{called}() got multiple values for argument {name!r}")
                put(self, name, args[index])
            elif name in kwargs:
                put(self, name, kwargs[name])
            elif name in defaults:
                put(self, name, defaults[name])
            elif name in factories:
                put(self, name, factories[name]())
            else:
                raise TypeError(f"{called}() missing required argument: {name!r}")

    return __init__


def _frozen(cls: type[Any], names: frozenset[str]
            ) -> tuple[Callable[..., None], Callable[..., None]]:
    """`__setattr__` and `__delattr__` as a frozen dataclass has them."""

    def __setattr__(self: Any, name: str, value: Any) -> None:  # noqa: N807 - the method
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:  # noqa: N807 - the method
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _compared(fields: tuple[dataclasses.Field[Any], ...]
              ) -> tuple[Callable[[Any, Any], Any], Callable[[Any], int]]:
    """`__eq__` and `__hash__` as a frozen dataclass has them."""
    compared = _values(tuple(field.name for field in fields if field.compare))
    hashed = _values(tuple(field.name for field in fields
                           if (field.compare if field.hash is None else field.hash)))

    def __eq__(self: Any, other: Any) -> Any:  # noqa: N807 - the method
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:  # noqa: N807 - the method
        return hash(hashed(self))

    return __eq__, __hash__


def _repr(fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any], str]:
    shown = tuple(field.name for field in fields if field.repr)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:  # noqa: N807 - the method
        said = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({said})"

    return __repr__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: type[_T]) -> type[_T]:
    """`cls` as a frozen dataclass, its methods made without compiling code (see above)."""
    own = dict(cls.__dict__)
    refused: list[str] = [name for name in ("__setattr__", "__delattr__", "__post_init__")
                          if name in own]
    undocumented = not cls.__doc__
    if undocumented:  # else dataclasses reads the signature of object.__init__ (tokenize)
        cls.__doc__ = cls.__name__
    made = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cast(Any, made))
    if undocumented:  # as dataclasses says it: the class's signature
        made.__doc__ = f"{cls.__name__}({', '.join(f'{f.name}: {f.type}' for f in fields)})"
    refused += [field.name for field in fields if field.kw_only is True or not field.init]
    if refused:
        raise TypeError(f"record {cls.__qualname__} cannot have {', '.join(refused)} (keyword-"
                        f"only or not in __init__); make it a @dataclass(frozen=True)")
    setattr_, delattr_ = _frozen(made, frozenset(field.name for field in fields))
    eq, hash_ = _compared(fields)
    methods = {"__init__": _init(made, fields), "__setattr__": setattr_, "__delattr__": delattr_,
               "__repr__": _repr(fields), "__eq__": eq, "__hash__": hash_}
    # as dataclasses does: a repr or an equality of the class's own is kept, and so is a hash
    # of its own (which None is not when the class defines __eq__, as Python then sets it)
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    for name, method in methods.items():
        if name in own and name != "__hash__" or name == "__hash__" and explicit_hash:
            continue
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(made, name, method)
    return made
