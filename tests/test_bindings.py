"""The tables of keys: each screen's keys are handled, named in its legend and help, never
shared by two actions, and never quit by surprise; the key list of docs/using.md is made from them.
Escape sequences decode to the keys a learner pressed."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from narrowing import step_as
from rich.console import Console
from waits import PATIENCE_S

from gradtutor.bindings import KEY_NAMES, KINDS, TABLES, Kind, Scroll, choice_key, find_key
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.parsons import grade
from gradtutor.i18n import msg, translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Lesson, Parsons, Predict, Quiz
from gradtutor.ui.keys import WINDOWS_KEYS, decode_escape
from gradtutor.ui.legend import Legend, entries, help_body, key_reference
from gradtutor.ui.render import Look
from gradtutor.walk.events import Choose, Unknown
from gradtutor.walk.exercise import ExerciseView
from gradtutor.walk.input import key_event, line_event
from gradtutor.walk.machine import begin, choices_on_screen, screen_kind
from gradtutor.walk.parsons import ParsonsView
from gradtutor.walk.quiz import QuizView
from gradtutor.walk.state import WalkState

if TYPE_CHECKING:
    from conftest import Cli

GUIDE = Path(__file__).parent.parent / "docs" / "using.md"
NAMES_TO_KEYS = {name: key for key, name in KEY_NAMES.items() if not key.startswith("wheel")}


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(None, rules=EXERCISE_RULES).find("grad")


def states(lesson: Lesson) -> dict[Kind, WalkState]:
    """A state of every kind of screen, from the shipped lesson."""
    steps = list(enumerate(lesson.steps))
    first = {kind: next(i for i, s in steps if isinstance(s, kind))
             for kind in (Exercise, Predict, Parsons, Quiz)}
    slide = begin(lesson, 0)
    exercise = begin(lesson, first[Exercise])
    assert isinstance(exercise.view, ExerciseView)
    predict = begin(lesson, first[Predict])
    quiz = begin(lesson, first[Quiz])
    parsons = begin(lesson, first[Parsons])
    step = lesson.steps[first[Parsons]]
    assert isinstance(parsons.view, ParsonsView) and isinstance(step, Parsons)
    right = replace(parsons.view, verdict=grade(step, tuple(line.id for line in step.lines)))
    assert right.verdict is not None and right.verdict.passed
    return {
        "slide": slide,
        "exercise": exercise,
        "confirm": replace(exercise, view=replace(exercise.view, confirming=True)),
        "predict": predict,
        "parsons": parsons,
        "ordered": replace(parsons, view=right),
        "question": quiz,
        "feedback": replace(quiz, view=QuizView(0, frozenset({0}), (frozenset({0}),))),
        "score": replace(quiz, view=QuizView(len(step_as(lesson, first[Quiz], Quiz).questions))),
        "help": replace(slide, help=True),
    }


def test_b_goes_back_and_a_asks_on_every_screen_that_goes_back_or_asks(grad: Lesson) -> None:
    """A letter learnt on a slide does the same on a prediction and a quiz question, where
    it once picked a choice (the choices are numbered instead)."""
    for kind, state in states(grad).items():
        if kind == "help":  # its keys act on the screen below it
            continue
        for letter, action in (("b", "back"), ("a", "ask")):
            if any(binding.action == action and binding.keys for binding in TABLES[kind]):
                binding = find_key(kind, letter)
                assert binding is not None and binding.action == action, (kind, letter)
        if choices_on_screen(grad, state):
            assert key_event(grad, state, "b") == "back", kind
            assert key_event(grad, state, "2") == Choose(1), kind


def test_every_kind_of_screen_is_reached_by_its_state(grad: Lesson) -> None:
    for kind, state in states(grad).items():
        assert screen_kind(grad, state) == kind


def test_no_key_means_two_things_on_one_screen(grad: Lesson) -> None:
    most_choices = max(len(q.choices) for quiz in grad.quizzes for q in quiz.questions)
    for kind in KINDS:
        seen: dict[str, str] = {}
        for binding in TABLES[kind]:
            keys = list(binding.keys)
            if "numbers" in keys:  # the choice numbers are keys of this screen too
                keys = [k for k in keys if k != "numbers"] + [
                    choice_key(i) for i in range(most_choices)]
            for key in keys:
                assert key not in seen, f"{kind}: {key!r} is both {seen[key]} and {binding.action}"
                seen[key] = binding.action
        words: dict[str, str] = {}
        for binding in TABLES[kind]:
            for word in binding.words:
                assert word not in words, f"{kind}: the word {word!r} means two things"
                words[word] = binding.action


def test_every_key_a_legend_names_does_what_it_says(grad: Lesson) -> None:
    for kind, state in states(grad).items():
        step = grad.steps[state.index]
        choices = len(step.choices) if isinstance(step, Predict) else 4
        for entry in entries(kind, keys=True, choices=choices, scrollable=True):
            for name in entry.keys:
                if name.startswith("1-"):  # the choice numbers
                    assert key_event(grad, state, "1") == Choose(0), kind
                    continue
                key = NAMES_TO_KEYS.get(name, name)
                event = key_event(grad, state, key)
                assert not isinstance(event, Unknown), f"{kind}: legend names {name!r}"
                binding = find_key(kind, key)
                assert binding is not None and binding.label == entry.label, (kind, name)


def test_every_word_a_pipe_legend_names_is_understood(grad: Lesson) -> None:
    for kind, state in states(grad).items():
        for entry in entries(kind, keys=False, choices=3, scrollable=False):
            for name in entry.keys:
                if name in ("1-3", "2 1 3 ..."):
                    continue
                word = "" if name == "Enter" else name
                assert not isinstance(line_event(grad, state, word), Unknown), (kind, name)


@pytest.mark.parametrize("key", ["pgup", "pgdn", "home", "end", "insert", "delete", "f1",
                                 "ctrl-d",
                                 "f5", "f12", "shift-tab", "esc", "tab", "unknown",
                                 "wheel-up", "wheel-down", "alt-x"])
def test_keys_that_are_not_q_or_ctrl_c_never_quit(grad: Lesson, key: str) -> None:
    for kind, state in states(grad).items():
        assert key_event(grad, state, key) != "quit", f"{key} quits on {kind}"


def test_q_and_ctrl_c_quit_everywhere(grad: Lesson) -> None:
    for kind, state in states(grad).items():
        assert key_event(grad, state, "q") == "quit", kind
        assert key_event(grad, state, "ctrl-c") == "quit", kind


def test_esc_closes_the_help_and_the_solution_question_and_is_silent_elsewhere(
    grad: Lesson,
) -> None:
    all_states = states(grad)
    assert key_event(grad, all_states["help"], "esc") == "help"
    assert key_event(grad, all_states["confirm"], "esc") == "no"
    assert key_event(grad, all_states["slide"], "esc") == Unknown("")


def test_a_key_the_help_does_not_bind_acts_on_the_screen_below_it(grad: Lesson) -> None:
    helped = replace(states(grad)["exercise"], help=True)
    assert key_event(grad, helped, "c") == "check"
    scrolled = key_event(grad, helped, "pgdn")
    assert isinstance(scrolled, Scroll) and scrolled.action == "page-down"


def render(renderable: object, width: int) -> list[str]:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, color_system=None)
    console.print(renderable)
    return buffer.getvalue().rstrip("\n").split("\n")


@pytest.mark.parametrize("width", [60, 80, 100])
@pytest.mark.parametrize(("plain", "lang"), [(False, "en"), (True, "en"), (False, "zh-CN")])
def test_the_legend_takes_one_line_at_80_columns_and_keeps_help_and_quit(width: int, plain: bool,
                                                                         lang: str) -> None:
    look = Look(plain, translator(lang))
    help_word, quit_word = look.tr(msg("help")), look.tr(msg("quit"))
    for kind in KINDS:
        for scrollable in (False, True):
            lines = render(Legend(entries(kind, True, 4, scrollable), look), width)
            legend = [line for line in lines if line.strip()]
            if width >= 80:
                assert len(legend) == 1, f"{kind} at {width}: {legend}"
            if kind == "asking":  # a question being typed: q is a letter of it
                assert "Esc" in legend[-1], kind
                continue
            assert legend[-1].rstrip().endswith(f"q {quit_word}"), kind
            if kind not in ("help", "answer", "answer-only") and len(legend) == 1:
                # the help, or an answer: a page over the screen, with no help of its own
                assert f"? {help_word}" in legend[0], kind


@pytest.mark.parametrize(("plain", "lang"), [(False, "en"), (True, "en"), (True, "zh-CN")])
def test_no_legend_says_a_word_twice(plain: bool, lang: str) -> None:
    look = Look(plain, translator(lang))
    for kind in KINDS:
        for keys in (True, False):
            line = " ".join(render(Legend(entries(kind, keys, 4, True), look), 200))
            twice = re.search(r"(?<!\S)(\S+) \1(?!\S)", line)
            assert twice is None, f"{kind}, keys={keys}: {line!r}"


def test_the_pipe_legend_of_a_quiz_question_names_back_once(cli: Cli) -> None:
    _, out, _ = cli("quiz", "tensors", stdin="1\n\nq\n")
    assert "1-4 answer | b back | ask | ? help | q quit" in out.splitlines()


def test_the_help_lists_every_binding_of_its_screen() -> None:
    look = Look(True)
    for kind in KINDS:
        text = " ".join(" ".join(render(help_body(kind, True, look, 4), 80)).split())
        for binding in TABLES[kind]:
            if binding.keys:  # a word-only binding is for typed lines, not keys
                assert " ".join(binding.help.split()) in text, (kind, binding.help)


def test_the_guides_key_list_is_made_from_the_tables() -> None:
    readme = GUIDE.read_text(encoding="utf-8")
    block = re.search(r"<!-- keys -->\n(.*?)<!-- /keys -->", readme, re.S)
    assert block is not None, "docs/using.md has no <!-- keys --> block"
    assert block.group(1) == key_reference(), (
        "docs/using.md's key list differs from the tables; paste python -c "
        "'from gradtutor.ui.legend import key_reference; print(key_reference(), end=\"\")'")


@pytest.mark.parametrize(("seq", "key"), [
    ("[A", "up"), ("OB", "down"), ("[C", "right"), ("OD", "left"),
    ("[5~", "pgup"), ("[6~", "pgdn"), ("[5;2~", "pgup"),
    ("[H", "home"), ("OH", "home"), ("[1~", "home"), ("[7~", "home"),
    ("[F", "end"), ("OF", "end"), ("[4~", "end"), ("[8~", "end"),
    ("[2~", "insert"), ("[3~", "delete"), ("[Z", "shift-tab"),
    ("OP", "f1"), ("OQ", "f2"), ("OR", "f3"), ("OS", "f4"), ("[11~", "f1"), ("[[A", "f1"),
    ("[[E", "f5"), ("[15~", "f5"), ("[17~", "f6"), ("[21~", "f10"), ("[24~", "f12"),
    ("[1;5C", "right"), ("[<64;10;5M", "wheel-up"), ("[<65;1;1M", "wheel-down"),
    ("[<0;1;1M", "unknown"), ("[99~", "unknown"), ("", "esc"), ("x", "alt-x"),
])
def test_escape_sequences_name_their_keys(seq: str, key: str) -> None:
    assert decode_escape(seq) == key


def test_the_windows_console_codes_name_the_same_keys() -> None:
    assert {WINDOWS_KEYS[c] for c in "HPMKIQGORS"} == {
        "up", "down", "right", "left", "pgup", "pgdn", "home", "end", "insert", "delete"}
    assert [WINDOWS_KEYS[c] for c in ";<=>?@ABCD"] == [f"f{n}" for n in range(1, 11)]


def test_a_terminal_that_is_gone_quits_where_the_learner_is(grad: Lesson) -> None:
    from gradtutor.ui.terminal import Io

    console = Console(file=io.StringIO())
    gone = Io(console, keys=True, stdin=io.StringIO(), read_key=lambda timeout: "eof")
    assert gone.next_event(grad, states(grad)["slide"]) == "quit"
    ctrl_d = Io(console, keys=True, stdin=io.StringIO(), read_key=lambda timeout: "ctrl-d")
    assert ctrl_d.next_event(grad, states(grad)["slide"]) == Unknown("Ctrl-D")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_news_posted_wakes_the_key_reader_at_once(grad: Lesson) -> None:
    """A verdict is not kept waiting for the key reader's timeout: posting it wakes a reader
    that would otherwise wait for a key for ever."""
    import os
    import pty
    import threading

    from gradtutor.ui.keys import posix_reader
    from gradtutor.ui.terminal import Io
    from gradtutor.walk.events import FileSaved

    main, side = pty.openpty()
    wake, note = os.pipe()
    os.set_blocking(wake, False)

    def nudge(what: bytes) -> None:
        os.write(note, what)

    try:
        with os.fdopen(side, "r", closefd=False) as stdin:
            read_key = posix_reader(stdin, wake)
            terminal = Io(Console(file=io.StringIO()), keys=True, stdin=stdin,
                          read_key=read_key, nudge=nudge)
            answers: list[str | None] = []
            waiting = threading.Thread(target=lambda: answers.append(read_key(None)),
                                       daemon=True)
            waiting.start()
            terminal.post(FileSaved("read-grad", "digest"))
            waiting.join(timeout=PATIENCE_S)
            assert answers == [None]  # woken, and no key was pressed
            assert terminal.next_event(grad, states(grad)["slide"]) == FileSaved("read-grad",
                                                                                 "digest")
    finally:
        for fd in (main, side, wake, note):
            os.close(fd)


def test_a_new_order_can_be_typed_before_and_after_the_order_is_right(grad: Lesson) -> None:
    from gradtutor.walk.events import Order

    for kind in ("parsons", "ordered"):
        assert line_event(grad, states(grad)[kind], "2 1 3 4 5") == Order((2, 1, 3, 4, 5)), kind
