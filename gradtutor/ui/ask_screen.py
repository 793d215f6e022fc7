"""`a` in the walkthrough and `watch`: a one-line prompt over the screen, then the course's
answer on a page of its own, scrollable, whose number keys go to a step it cites in this
lesson. Esc gives the screen back exactly as it was, scrolled where it was; news that came
meanwhile (a verdict) waits in the inbox and shows once the screen is back. Without a
terminal, `ask QUESTION` typed on a line prints the answer.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text

from gradtutor.asking.answer import Answer, Moment
from gradtutor.bindings import Kind, find_key
from gradtutor.env import Environment
from gradtutor.errors import GradtutorError
from gradtutor.i18n import Translator, msg
from gradtutor.lessons.model import Exercise, Lesson
from gradtutor.ui import render
from gradtutor.ui.answer_view import answer_parts
from gradtutor.ui.legend import Legend, entries
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look
from gradtutor.ui.screen import Screen
from gradtutor.ui.terminal import Io
from gradtutor.walk.events import Event, GoTo
from gradtutor.walk.state import WalkState

MAX_QUESTION = 2000  # characters: a pasted message fits; a flood of keys does not


class PromptScreen(Screen):
    """The screen below, with the question being typed in place of its legend."""

    def __init__(self, below: Screen, typed: str) -> None:
        super().__init__(below.header, below.parts, "", "asking", True, below.look, 0,
                         below.page, below.focus)
        self.typed = typed

    def footer(self, scrollable: bool) -> RenderableType:
        look = self.look
        cursor = "_" if look.plain else "▏"
        line = Prose(look.tr(msg("Ask: ")), style="" if look.plain else "bold cyan")
        line.append(self.typed + cursor)
        return Group(Text(""), line, Legend(entries("asking", True), look))


def moment_of(lesson: Lesson, state: WalkState, workspace: Path,
              tr: Translator) -> Moment:
    """The learner's moment on this screen: the step, and on an exercise the file and the
    latest verdict's failing checks."""
    from gradtutor.ui.asking import failing

    step = lesson.steps[state.index]
    if not isinstance(step, Exercise):
        return Moment(lesson.id, step.id)
    from gradtutor.workspace import exercise_path, read_exercise_file

    try:
        code: str | None = read_exercise_file(exercise_path(workspace, step.id)).decode(
            "utf-8", "replace")
    except GradtutorError:
        code = None
    verdict = getattr(state.view, "verdict", None)
    return Moment(lesson.id, step.id, step, code, failing(verdict, tr))


def answer_kind(found: Answer, lesson: Lesson) -> Kind:
    """The answer page's keys: 1-3 only when a step it cites is in this lesson."""
    here = any(cited.doc.lesson == lesson.id for cited in found.steps)
    return "answer" if here else "answer-only"


def answer_screen(found: Answer, below: Screen, lesson: Lesson, asked: int) -> Screen:
    parts = answer_parts(found, below.look, lesson.id, walking=True)
    return Screen(below.header, parts, "", answer_kind(found, lesson), True, below.look, 0,
                  ("ask", asked))


def ask_on_terminal(io: Io, below: Screen, lesson: Lesson, state: WalkState,
                    env: Environment, workspace: Path, course: Path | None) -> Event | None:
    """Ask and answer over the screen `below` until the learner goes back (None), to a step
    (GoTo), or quits ("quit")."""
    from gradtutor.ui.asking import ask_course

    full = io.full
    assert full is not None and io.read_key is not None
    kept = full.keep()
    shown: Screen = below
    found: Answer | None = None
    try:
        while True:
            question = _prompt(io, shown)
            if question == "quit":
                return "quit"
            if question is None:  # Esc on the prompt: back to what was under it
                if found is None:
                    return None
                io.show(shown, follow=False)
            else:
                moment = moment_of(lesson, state, workspace, env.tr)
                found = ask_course(course, question, moment, env.lang)
                shown = answer_screen(found, below, lesson, id(found))
                io.show(shown, follow=False)
            again, action = _on_answer(io, found, lesson)
            if not again:
                return action
    finally:
        full.restore(kept)


def _prompt(io: Io, below: Screen) -> str | None:
    """The question typed on the prompt line; None for Esc, "quit" for the end of input."""
    typed = ""
    while True:
        io.show(PromptScreen(below, typed), follow=False)
        key = io.key()
        if key == "eof":
            return "quit"
        if key in ("esc", "ctrl-c"):
            return None
        if key == "enter":
            if typed.strip():
                return typed.strip()
            continue
        if key == "backspace":
            typed = typed[:-1]
        elif key == "space" or key == "tab":
            typed += " "
        elif len(key) == 1 and key.isprintable() and len(typed) < MAX_QUESTION:
            typed += key


def _on_answer(io: Io, found: Answer, lesson: Lesson) -> tuple[bool, Event | None]:
    """Keys on the answer page: scrolling, a number to go to a step, `a` to ask again
    ((True, None)); else what the walkthrough does next: (False, an event or None)."""
    assert io.full is not None
    while True:
        key = io.key()
        if key == "eof":
            return False, "quit"
        binding = find_key(answer_kind(found, lesson), key)
        if binding is None:
            continue
        if binding.scroll:
            io.full.scroll(binding.action)  # type: ignore[arg-type]
        elif binding.action == "quit":
            return False, "quit"
        elif binding.action == "close":
            return False, None
        elif binding.action == "ask":
            return True, None
        elif binding.action == "go":
            number = int(key)
            if number <= len(found.steps) and found.steps[number - 1].doc.lesson == lesson.id:
                return False, GoTo(found.steps[number - 1].doc.position - 1)


def ask_on_lines(io: Io, question: str, lesson: Lesson, state: WalkState, env: Environment,
                 workspace: Path, course: Path | None, look: Look) -> None:
    """`ask QUESTION` typed on a line: the answer printed below the screen."""
    from gradtutor.ui.asking import ask_course

    if not question:
        io.console.print(render.inline(env.tr(msg(
            "Type your question after ask, on one line: `ask why is my w.grad None?`")), look))
        return
    found = ask_course(course, question, moment_of(lesson, state, workspace, env.tr), env.lang)
    io.console.print(Group(*answer_parts(found, look, lesson.id)))

