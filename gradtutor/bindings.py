"""The keys of every kind of screen, as one table each: the single source from which the key
handler, the key legend, the `?` help and docs/using.md's key list are made. Pure data.

A binding names an action: an event the walkthrough's state machine handles ("next",
"check", ...), or a view action the shell does itself (scrolling). Keys are the names
`gradtutor.ui.keys` decodes ("right", "pgdn", "f1", "a"); words are what a learner types on
a line when there is no terminal. "numbers" stands for the choice numbers of the question
or prediction on screen: choices are picked by number (1, 2, ...), so that every letter key
means one thing on every screen (`b` back, `a` ask, as the slides teach them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from gradtutor.i18n import msg
from gradtutor.records import record

# The kinds of screen, each with its own table (`TABLES`, whose order `KINDS` keeps).
Kind = Literal["slide", "exercise", "confirm", "predict", "parsons", "ordered", "question",
               "feedback", "score", "help", "asking", "answer", "answer-only"]

# What the shell does itself: move the body of the screen in its viewport. "page-or-next"
# pages down, and goes on to the next step once the end of the step is in view.
ViewAction = Literal["line-up", "line-down", "page-up", "page-down", "page-or-next", "top",
                     "bottom"]
VIEW_ACTIONS: frozenset[str] = frozenset(
    {"line-up", "line-down", "page-up", "page-down", "page-or-next", "top", "bottom"})


@record
class Scroll:
    """A key that moves the screen's body, not the lesson: the shell handles it."""

    action: ViewAction


@record
class Ask:
    """`a`: the shell asks for a question, over the screen, and answers it from the course;
    `question` when a typed line carried it (`ask why is my grad None?`)."""

    question: str = ""


# What the answer screen's keys do: close it, or go to the step a number names.
AskAction = Literal["close", "go"]


@record
class Binding:
    """One thing a screen lets the learner do.

    `label` is the legend's word for it and `help` the help screen's line. `legend` places
    it in the legend: 0 keeps it out (the help still lists it); otherwise entries with a
    higher number are dropped first when the line is too narrow. `scroll` entries show
    only while the body is taller than its viewport."""

    action: str
    keys: tuple[str, ...]
    words: tuple[str, ...]
    label: str
    help: str
    legend: int = 0

    @property
    def scroll(self) -> bool:
        return self.action in VIEW_ACTIONS


# Actions most screens share.
_NEXT, _BACK, _HELP, _QUIT = msg("next"), msg("back"), msg("help"), msg("quit")
_SCROLL = msg("scroll")
HELP = Binding("help", ("?", "f1"), ("?", "help"), _HELP, msg("show or hide this help"),
               legend=1)
QUIT = Binding("quit", ("q", "ctrl-c"), ("q", "quit"), _QUIT,
               msg("quit; your place is saved"), legend=1)
BACK = Binding("back", ("left", "b"), ("b", "back"), _BACK, msg("the previous step"), legend=2)
ASK = Binding("ask", ("a", "/"), ("ask",), msg("ask"),
              msg("ask the course a question; Esc comes back here"), legend=2)


def _scrolling(arrows: bool, space: ViewAction | None = "page-down") -> tuple[Binding, ...]:
    """How the body scrolls; `arrows` and `space` where they have no other job on the
    screen (None: space has one)."""
    lines = ((Binding("line-up", ("up", "wheel-up"), (), _SCROLL,
                      msg("scroll up a line (the mouse wheel too)"), legend=3),
              Binding("line-down", ("down", "wheel-down"), (), _SCROLL,
                      msg("scroll down a line (the mouse wheel too)"), legend=3))
             if arrows else ())
    space_help = (msg("a page down, or the next step once the end is in view")
                  if space == "page-or-next" else msg("a page down"))
    return (*lines,
            Binding("page-up", ("pgup",), (), _SCROLL, msg("a page up"),
                    legend=0 if arrows else 3),
            Binding("page-down", ("pgdn",), (), _SCROLL, msg("a page down"),
                    legend=0 if arrows else 3),
            *([Binding(space, ("space",), (), _SCROLL, space_help)] if space else []),
            Binding("top", ("home",), (), _SCROLL, msg("the top of the step")),
            Binding("bottom", ("end",), (), _SCROLL, msg("the end of the step")))


def _moving(legend: int) -> tuple[Binding, ...]:
    """Putting the lines of a Parsons step in order."""
    return (
        Binding("up", ("up", "k"), (), msg("move"),
                msg("move the cursor, or the line you hold, up"), legend),
        Binding("down", ("down", "j"), (), msg("move"),
                msg("move the cursor, or the line you hold, down"), legend),
        Binding("grab", ("space",), (), msg("grab or drop"),
                msg("grab the line under the cursor, or drop the one you hold"), legend),
        Binding("order", (), ("2 1 3 ...",), msg("the new order, by number"),
                msg("the lines' numbers in your order"), legend),
    )



_CHOOSE = Binding("choose", ("numbers",), ("numbers",), msg("choose"),
                  msg("choose an answer (again to change it)"), legend=1)

TABLES: dict[Kind, tuple[Binding, ...]] = {
    "slide": (
        Binding("next", ("right", "n", "enter"), ("n", "next", ""), _NEXT,
                msg("the next step"), legend=1),
        BACK, ASK, *_scrolling(True, "page-or-next"), HELP, QUIT),
    "exercise": (
        Binding("edit", ("e",), ("e", "edit"), msg("edit"),
                msg("open your file in your editor ($VISUAL or $EDITOR)"), legend=1),
        Binding("check", ("c",), ("c", "check"), msg("check"),
                msg("check your file now (each save is checked anyway)"), legend=1),
        Binding("hint", ("h",), ("h", "hint"), msg("hint"),
                msg("the next hint, one more each time"), legend=1),
        # the short verdict says this key where it leaves something out: not in the legend
        Binding("verdict", ("v",), ("v", "verdict"), msg("whole verdict"),
                msg("the whole verdict, every case and each check's hint; again for the "
                    "short one")),
        Binding("solution", ("s",), ("s", "solution"), msg("solution"),
                msg("the solution, after you confirm"), legend=2),
        Binding("next", ("right", "n", "enter"), ("n", "next", "skip", ""), _NEXT,
                msg("the next step, solved or not"), legend=1),
        BACK, ASK, *_scrolling(True), HELP, QUIT),
    "confirm": (
        Binding("yes", ("y",), ("y", "yes"), msg("show the solution"),
                msg("show the solution"), legend=1),
        Binding("no", ("n", "esc", "enter"), ("n", "no", ""), msg("keep it hidden"),
                msg("keep it hidden"), legend=1),
        ASK, *_scrolling(True), HELP, QUIT),
    "predict": (
        _CHOOSE,
        Binding("submit", ("enter",), (), msg("submit"), msg("submit your prediction"),
                legend=1),
        Binding("next", ("right", "n"), ("n", "next", "skip"), msg("skip"),
                msg("skip to the next step without predicting"), legend=2),
        BACK, ASK, *_scrolling(True), HELP, QUIT),
    "parsons": (
        *_moving(legend=1),
        Binding("submit", ("enter",), ("",), msg("check"),
                msg("check the order"), legend=1),
        Binding("next", ("right", "n"), ("n", "next"), _NEXT,
                msg("the next step, solved or not"), legend=2),
        BACK, ASK, *_scrolling(False, space=None), HELP, QUIT),
    # the same step once its order is right: Enter goes on; a move makes a new order to check
    "ordered": (
        Binding("next", ("enter", "right", "n"), ("", "n", "next"), _NEXT,
                msg("the next step"), legend=1),
        *_moving(legend=2), BACK, ASK, *_scrolling(False, space=None), HELP, QUIT),
    "question": (
        Binding("choose", ("numbers",), (), msg("choose"),
                msg("choose an answer (again to change it)"), legend=1),
        Binding("submit", ("enter",), (), msg("submit"), msg("submit your answer"), legend=1),
        Binding("answer", (), ("numbers",), msg("answer"),
                msg("your answer's numbers, such as 2 or 1 3"), legend=1),
        Binding("back", ("left", "b"), ("b", "back"), _BACK,
                msg("the previous question or step"), legend=2),
        ASK, *_scrolling(True), HELP, QUIT),
    "feedback": (
        Binding("next", ("enter", "right", "n"), ("", "n", "next"), msg("next question"),
                msg("the next question"), legend=1),
        Binding("back", ("left", "b"), ("b", "back"), _BACK, msg("the previous question"),
                legend=2),
        ASK, *_scrolling(True), HELP, QUIT),
    "score": (
        Binding("next", ("enter", "right", "n"), ("", "n", "next"), _NEXT,
                msg("the next step"), legend=1),
        Binding("back", ("left", "b"), ("b", "back"), _BACK, msg("back to the last question"),
                legend=2),
        ASK, *_scrolling(True), HELP, QUIT),
    "help": (
        Binding("help", ("?", "f1", "esc"), ("?", "help"), msg("close help"),
                msg("close this help (any other key of the screen below works too)"),
                legend=1),
        *_scrolling(True), QUIT),
    # typing a question for `a`, on a line over the screen
    "asking": (
        Binding("submit", ("enter",), (), msg("ask"), msg("ask your question"), legend=1),
        Binding("close", ("esc",), (), msg("cancel"),
                msg("back to the screen as it was"), legend=1),
        Binding("erase", ("backspace",), (), msg("erase"), msg("erase the last character")),
    ),
    # the course's answer to it
    "answer": (
        Binding("close", ("esc", "left", "b"), (), _BACK,
                msg("back to the screen as it was"), legend=1),
        Binding("go", ("1", "2", "3"), (), msg("go to the step"),
                msg("go to the step of this lesson with that number"), legend=2),
        Binding("ask", ("a", "/"), (), msg("ask again"), msg("ask another question"),
                legend=2),
        *_scrolling(True), QUIT),
    # the same page when it cites no step of this lesson: nothing for a number to go to
    "answer-only": (
        Binding("close", ("esc", "left", "b"), (), _BACK,
                msg("back to the screen as it was"), legend=1),
        Binding("ask", ("a", "/"), (), msg("ask again"), msg("ask another question"),
                legend=2),
        *_scrolling(True), QUIT),
}
KINDS: tuple[Kind, ...] = tuple(TABLES)
# The screens a learner on typed lines meets: there `ask QUESTION` is one line and its answer
# is printed below the screen, so the question line and the answer pages exist only with keys.
LINE_KINDS: tuple[Kind, ...] = tuple(kind for kind in KINDS
                                     if kind not in ("asking", "answer", "answer-only"))


def find_key(kind: Kind, key: str) -> Binding | None:
    """The binding of `key` on a screen of `kind`; a capital letter counts as its small one
    ("numbers" bindings are looked up by the caller, which knows how many choices there
    are)."""
    found = next((b for b in TABLES[kind] if key in b.keys), None)
    if found is None and len(key) == 1 and key != key.lower():
        return find_key(kind, key.lower())
    return found


def find_word(kind: Kind, word: str) -> Binding | None:
    """The binding of a typed word (lower case, stripped; "" for an empty line)."""
    return next((b for b in TABLES[kind] if word in b.words), None)


def offers(kind: Kind, action: str) -> bool:
    """A screen of `kind` has a binding for `action` ("order", "choose", "answer")."""
    return any(b.action == action for b in TABLES[kind])


# How a key is written on screen; a key missing here is written as it is typed.
KEY_NAMES: dict[str, str] = {
    "right": "→", "left": "←", "up": "↑", "down": "↓", "enter": "Enter", "space": "space",
    "pgup": "PgUp", "pgdn": "PgDn", "home": "Home", "end": "End", "esc": "Esc", "f1": "F1",
    "ctrl-c": "Ctrl-C", "ctrl-d": "Ctrl-D", "wheel-up": "wheel", "wheel-down": "wheel",
    "insert": "Insert", "delete": "Delete", "shift-tab": "Shift-Tab", "tab": "Tab",
    "backspace": "Backspace", **{f"f{n}": f"F{n}" for n in range(1, 13)},
}
# Keys the legend leaves to the help: second ways to do what a shown key does.
_QUIET = frozenset({"ctrl-c", "wheel-up", "wheel-down", "f1", "k", "j", "/"})


def choice_key(index: int) -> str:
    """How the screen names choice `index` (from 0), and the key that picks it: 1, 2, ..."""
    return str(index + 1)


def choice_index(key: str, choices: int) -> int | None:
    """The choice (from 0) that `key` picks among `choices`; None if it picks none."""
    if len(key) == 1 and key.isdigit() and 1 <= int(key) <= choices:
        return int(key) - 1
    return None


def _choices_name(choices: int) -> str:
    return f"1-{choices}" if choices else "1 2 3 ..."


def key_name(key: str, choices: int = 0) -> str:
    """How a key is written on screen; `choices` says what "numbers" stands for."""
    if key == "numbers":
        return _choices_name(choices)
    return KEY_NAMES.get(key, key)


def shown_keys(binding: Binding, keys: bool, choices: int = 0,
               quiet: bool = False) -> list[str]:
    """The keys (or, without a terminal, the words) of `binding` as the screen writes
    them; `quiet` leaves out second ways that only the help lists."""
    if keys:
        loud = [k for k in binding.keys if not (quiet and k in _QUIET)] or binding.keys
        names = [key_name(k, choices) for k in loud]
    else:
        names = [_word_name(w, choices) for w in binding.words]
    return list(dict.fromkeys(names))  # in order, once each ("wheel" twice)


def _word_name(word: str, choices: int) -> str:
    if word == "numbers":
        return _choices_name(choices)
    return "Enter" if word == "" else word


def keys_of(kind: Kind) -> Iterable[str]:
    """Every key a screen of `kind` answers to."""
    for binding in TABLES[kind]:
        yield from binding.keys
