"""Reading a worker's result channel: its lines, decoded one by one (protocol.py), checked
in order, and what is wrong with them named as a `Fault`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from gradtutor.checking.protocol import (
    CheckFinal,
    Expected,
    Malformed,
    SnippetFinal,
    decode_expected,
    decode_learner_error,
    decode_observed,
    decode_snippet,
    decode_worker_error,
    parse,
)


class Fault(str, Enum):
    """Why a result channel could not be read."""

    OVERFLOW = "overflow"  # more than the tutor keeps
    NOT_A_RESULT = "not-a-result"  # a line that is not a message this channel carries
    WRONG_SHAPE = "wrong-shape"  # a message of a kind it carries, but malformed
    OUT_OF_ORDER = "out-of-order"  # the messages in an order no worker sends them
    BAD_REFERENCES = "bad-references"  # the opening `expected` is malformed


F = TypeVar("F", CheckFinal, SnippetFinal)


@dataclass(frozen=True)
class ChannelRead(Generic[F]):
    """A result channel, read: for a check, the references it is judged against (the
    worker's, or the tutor's own); the message that ended it, if one came; or the fault that
    made it unreadable (`about`: the type of a WRONG_SHAPE message)."""

    expected: Expected | None = None
    final: F | None = None
    fault: Fault | None = None
    about: str = ""


def read_check(data: bytes, overflow: bool, reference: Expected | None = None
               ) -> ChannelRead[CheckFinal]:
    """A check's result channel (`data`, its bytes; `overflow`: more came than the tutor
    kept), read by `check_messages`."""
    if overflow:
        return ChannelRead(fault=Fault.OVERFLOW)
    try:
        values = _json_lines(data)
    except Malformed:
        return ChannelRead(fault=Fault.NOT_A_RESULT)
    return check_messages(values, reference)


def check_messages(values: Sequence[object], reference: Expected | None = None
                   ) -> ChannelRead[CheckFinal]:
    """A check's messages: `expected`, then `observed`, `learner_error` or `worker_error`.
    With a `reference` the tutor had from elsewhere they open with `started` instead, and a
    worker that sends references of its own is out of order."""
    return _read(values, "started" if reference is not None else "expected",
                 ("observed", "learner_error", "worker_error"), _check_final, reference)


def read_snippet(data: bytes, overflow: bool) -> ChannelRead[SnippetFinal]:
    """A snippet's result channel: `started`, then `snippet` or `worker_error`."""
    if overflow:
        return ChannelRead(fault=Fault.OVERFLOW)
    try:
        values = _json_lines(data)
    except Malformed:
        return ChannelRead(fault=Fault.NOT_A_RESULT)
    return _read(values, "started", ("snippet", "worker_error"), _snippet_final, None)


def _json_lines(data: bytes) -> list[object]:
    """Every complete line of `data` as JSON. An unfinished last line (the process died while
    writing it) is dropped: it says only that the process died."""
    return [parse(text) for text in data.split(b"\n")[:-1]]


def _check_final(message: Mapping[str, Any], cases: int) -> CheckFinal:
    kind = message["type"]
    return (decode_observed(message, cases) if kind == "observed" else
            decode_learner_error(message) if kind == "learner_error" else
            decode_worker_error(message))


def _snippet_final(message: Mapping[str, Any], cases: int) -> SnippetFinal:
    return decode_worker_error(message) if message["type"] == "worker_error" else (
        decode_snippet(message))


def _read(values: Sequence[object], opening: str, finals: tuple[str, ...],
          decode_final: Callable[[Mapping[str, Any], int], F],
          reference: Expected | None) -> ChannelRead[F]:
    """`values` checked for shape and order: `opening`, then one of `finals`, which
    `decode_final` decodes. They may stop short (the process died), or be a lone
    `worker_error` (it failed before learner code existed)."""
    messages: list[Mapping[str, Any]] = []
    for message in values:
        if not isinstance(message, dict) or message.get("type") not in (opening, *finals):
            return ChannelRead(fault=Fault.NOT_A_RESULT)
        messages.append(message)
    kinds = [m["type"] for m in messages]
    if not kinds:
        return ChannelRead()
    if kinds == ["worker_error"]:  # the worker failed before learner code existed
        return _ending(decode_final, messages[0], 0, None)
    if kinds[0] != opening or len(kinds) > 2 or opening in kinds[1:]:
        return ChannelRead(fault=Fault.OUT_OF_ORDER)
    references = reference
    if opening == "expected":
        try:
            references = decode_expected(messages[0])
        except Malformed:
            return ChannelRead(fault=Fault.BAD_REFERENCES)
    if len(messages) == 1:
        return ChannelRead(expected=references)
    cases = len(references["cases"]) if references is not None else 0
    return _ending(decode_final, messages[1], cases, references)


def _ending(decode_final: Callable[[Mapping[str, Any], int], F], message: Mapping[str, Any],
            cases: int, references: Expected | None) -> ChannelRead[F]:
    try:
        final = decode_final(message, cases)
    except Malformed:
        return ChannelRead(fault=Fault.WRONG_SHAPE, about=str(message["type"]))
    return ChannelRead(expected=references, final=final)
