"""The walkthrough's shell: show a screen, read a key or a line, save what changed.

All decisions live in `gradtutor.walk`; this module only does the I/O around them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.text import Text

from gradtutor import progress as prog
from gradtutor.env import Environment
from gradtutor.lessons.model import LETTERS, Lesson, Quiz, Slide
from gradtutor.store import ProgressStore, now_iso
from gradtutor.ui import render
from gradtutor.ui.keys import key_reader
from gradtutor.ui.render import Look
from gradtutor.walk import (
    Effect,
    Event,
    Finished,
    QuizDone,
    Visit,
    WalkState,
    begin,
    handle,
    key_event,
    line_event,
)


@dataclass
class Io:
    """How screens go out and events come in: single keys on a terminal, else lines."""

    console: Console
    read_event: Callable[[Lesson, WalkState], Event]
    keys: bool

    def show(self, renderable: RenderableType) -> None:
        if self.keys:
            self.console.clear()
        self.console.print(renderable)
        if not self.keys:
            self.console.print("> ", end="")
            self.console.file.flush()


def make_io(env: Environment, plain: bool) -> Io:
    console = env.console(plain)
    if env.interactive:
        read_key = key_reader(env.stdin)

        def from_key(lesson: Lesson, state: WalkState) -> Event:
            return key_event(lesson, state, read_key())

        return Io(console, from_key, keys=True)

    def from_line(lesson: Lesson, state: WalkState) -> Event:
        line = env.stdin.readline()
        if not line:  # end of input: stop where we are, progress is saved
            return "quit"
        return line_event(lesson, state, line)

    return Io(console, from_line, keys=False)


def legend(lesson: Lesson, state: WalkState, keys: bool, look: Look) -> RenderableType:
    step = lesson.steps[state.index]
    view = state.quiz
    if isinstance(step, Quiz) and view is not None and view.question < len(step.questions):
        last = LETTERS[len(step.questions[view.question].choices) - 1]
        if not view.submitted():
            if keys:
                return render.legend([(f"a-{last}", "choose"), ("Enter", "submit"),
                                      ("←", "back"), ("?", "help"), ("q", "quit")], look)
            several = " (several: a c)" if step.questions[view.question].multiple else ""
            return render.legend([(f"a-{last}", f"answer{several}"), ("back", "go back"),
                                  ("?", "help"), ("q", "quit")], look)
        return render.legend([("Enter" if not keys else "Enter/→", "next question"),
                              ("b" if not keys else "←", "back"), ("q", "quit")], look)
    if keys:
        return render.legend([("→/n/Enter", "next"), ("←/b", "back"), ("?", "help"),
                              ("q", "quit")], look)
    return render.legend([("n or Enter", "next"), ("b", "back"), ("?", "help"),
                          ("q", "quit")], look)


def help_body(keys: bool, look: Look) -> RenderableType:
    rows = [
        ("→  n  Enter", "next step"),
        ("←  b", "previous step"),
        ("a b c ...", "in the quiz: choose; Enter submits"),
        ("?", "show or hide this help"),
        ("q", "quit; your place is saved"),
    ] if keys else [
        ("n or empty line", "next step"),
        ("b", "previous step"),
        ("a  or  a c", "in the quiz: your answer letters"),
        ("back", "in the quiz: previous question or step"),
        ("?", "show or hide this help"),
        ("q", "quit; your place is saved"),
    ]
    lines = [Text("Keys", style="bold"), Text("")]
    lines += [Text.assemble((f"  {k:<18}", "bold"), what) for k, what in rows]
    lines += [Text(""), Text("Progress is saved at every step; `gradtutor start` resumes.")]
    return Group(*lines)


def screen(lesson: Lesson, state: WalkState, width: int, keys: bool, look: Look) -> RenderableType:
    """Everything one screen shows for this state."""
    step = lesson.steps[state.index]
    if state.help:
        body = help_body(keys, look)
    elif isinstance(step, Slide):
        body = render.slide_body(step, look)
    elif isinstance(step, Quiz) and state.quiz is not None:
        view = state.quiz
        total = len(step.questions)
        if view.question >= total:
            body = render.score_body(step, view.score(step), total, look)
        elif view.submitted():
            body = render.feedback_body(step.questions[view.question], view.question + 1, total,
                                        view.answers[view.question], look)
        else:
            body = render.question_body(step.questions[view.question], view.question + 1, total,
                                        view.selected, look)
    else:
        body = render.practice_preview(step, look)
    parts: list[RenderableType] = [render.header(lesson, state.index, width, look), body]
    if state.notice:
        parts += [Text(""), Text(f"! {state.notice}", style="bold yellow")]
    parts.append(legend(lesson, state, keys, look))
    return Group(*parts)


def run(lesson: Lesson, start: int, env: Environment, store: ProgressStore, plain: bool,
        keep_place: bool = True) -> WalkState:
    """Walk through `lesson` from step `start` until the learner quits or finishes.

    Every change is saved as it happens, so nothing is lost on Ctrl-C or a closed terminal.
    With `keep_place` False (a quiz taken alone) only quiz scores are saved.
    """
    look = Look(plain)
    io = make_io(env, plain)
    state = begin(lesson, start)

    def save(effects: list[Effect]) -> None:
        if not effects:
            return
        now = now_iso()

        def change(p: prog.Progress) -> prog.Progress:
            for effect in effects:
                if isinstance(effect, Visit) and keep_place:
                    p = prog.visit(p, lesson.id, effect.step_id, now)
                elif isinstance(effect, QuizDone):
                    p = prog.record_quiz(p, lesson.id, effect.quiz_id, effect.score,
                                         effect.total, now)
                elif isinstance(effect, Finished) and keep_place:
                    p = prog.finish(p, lesson.id, now)
            return p

        store.update(change)

    opened: list[Effect] = [Visit(lesson.steps[state.index].id)]  # saved once it is on screen
    try:
        while state.outcome is None:
            io.show(screen(lesson, state, io.console.width, io.keys, look))
            save(opened)
            opened = []
            state, effects = handle(lesson, state, io.read_event(lesson, state))
            save(effects)
    except KeyboardInterrupt:
        state = handle(lesson, state, "quit")[0]
    if not io.keys:
        io.console.print()
    return state
