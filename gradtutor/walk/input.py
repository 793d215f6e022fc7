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
    find_key,
    find_word,
    key_name,
    offers,
)
from gradtutor.lessons.model import LETTERS, Lesson
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
        if (choices and offers(table, "choose") and len(key) == 1
                and key.lower() in LETTERS[:choices]):
            return Choose(LETTERS.index(key.lower()))
        binding = find_key(table, key)
        if binding is not None:
            return _as_event(binding)
    # Esc where there is nothing to close, and keys no table knows, do nothing at all
    return Unknown("" if key in ("unknown", "esc") else key_name(key))


def line_event(lesson: Lesson, state: WalkState, line: str) -> Event:
    """A typed line as an event: a word of the screen's table (`n`, `b`, `q`, `?`, empty for
    Enter, ...), letters such as `a c` for an answer, or line numbers for an order."""
    text = line.strip().lower()
    asked = re.match(r"(?:ask|/)(?:\s+|$)", text)
    if asked and any(offers(t, "ask") for t in _tables(lesson, state)):
        return Ask(line.strip()[asked.end():].strip())
    letters = [c for c in text if c not in " ,;"]
    choices = choices_on_screen(lesson, state)
    for table in _tables(lesson, state):
        if offers(table, "order") and text and all(c.isdigit() or c in " ,;" for c in text):
            return Order(tuple(int(n) for n in text.replace(",", " ").replace(";", " ")
                               .split()))
        if (choices and letters and find_word(table, "letters") is not None
                and all(c in LETTERS[:choices] for c in letters)):
            return Answer(frozenset(LETTERS.index(c) for c in letters))
        binding = find_word(table, text)
        if binding is not None:
            return _as_event(binding)
        if choices and letters and all(c in LETTERS for c in letters):
            return Answer(frozenset(LETTERS.index(c) for c in letters))  # handle() says the range
    return "submit" if not text else Unknown(line.strip())
