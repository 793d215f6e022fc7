"""A key press or a typed line, as the event it means on the screen on view: looked up in that
screen's table of keys (`gradtutor.bindings`). Pure."""

from __future__ import annotations

import re
from typing import cast

from gradtutor.bindings import (
    Ask,
    Binding,
    Kind,
    Scroll,
    ViewAction,
    choice_index,
    find_key,
    find_word,
    key_name,
    offers,
)
from gradtutor.lessons.model import Lesson
from gradtutor.walk.events import Answer, Choose, Event, Order, Unknown
from gradtutor.walk.machine import beneath, choices_on_screen, screen_kind
from gradtutor.walk.state import WalkState


def _as_event(binding: Binding) -> Event:
    if binding.action == "ask":
        return Ask()
    if binding.scroll:
        return Scroll(cast(ViewAction, binding.action))
    return cast(Event, binding.action)


def _tables(lesson: Lesson, state: WalkState) -> tuple[Kind, ...]:
    """The tables a key or word is looked up in, in turn: the screen's own, and on the help,
    the screen's below it (a key the help does not bind acts there)."""
    kind = screen_kind(lesson, state)
    return (kind, beneath(lesson, state)) if kind == "help" else (kind,)


def key_event(lesson: Lesson, state: WalkState, key: str) -> Event:
    """A key press as an event, by the table of the screen on view (`gradtutor.bindings`)."""
    choices = choices_on_screen(lesson, state)
    for table in _tables(lesson, state):
        index = choice_index(key, choices) if offers(table, "choose") else None
        if index is not None:
            return Choose(index)
        binding = find_key(table, key)
        if binding is not None:
            return _as_event(binding)
    # Esc where there is nothing to close, and keys no table knows, do nothing at all
    return Unknown("" if key in ("unknown", "esc") else key_name(key))


def line_event(lesson: Lesson, state: WalkState, line: str) -> Event:
    """A typed line as an event: a word of the screen's table (`n`, `b`, `q`, `?`, empty for
    Enter, ...), choice numbers such as `1 3` for an answer, or line numbers for an order."""
    text = line.strip().lower()
    asked = re.match(r"(?:ask|/)(?:\s+|$)", text)
    if asked and any(offers(t, "ask") for t in _tables(lesson, state)):
        return Ask(line.strip()[asked.end():].strip())
    numbers = text and all(c.isdigit() or c in " ,;" for c in text)
    # each digit a choice (there are at most 9), so "13" answers as "1 3" does
    picked = frozenset(int(c) - 1 for c in text if c.isdigit())
    choices = choices_on_screen(lesson, state)
    for table in _tables(lesson, state):
        if offers(table, "order") and numbers:
            return Order(tuple(int(n) for n in text.replace(",", " ").replace(";", " ")
                               .split()))
        if choices and numbers and find_word(table, "numbers") is not None:
            return Answer(picked)  # handle() says so when one is out of range
        binding = find_word(table, text)
        if binding is not None:
            return _as_event(binding)
    return "submit" if not text else Unknown(line.strip())
