"""One screen of the walkthrough: the header, the body its step's kind draws from the view
of the moment (`gradtutor.ui.step_screens`) or the help over it, the notice, and the key legend
of its kind of screen. Pure: nothing here prints.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Group

from gradtutor.lessons.model import Lesson
from gradtutor.ui import render
from gradtutor.ui.legend import help_body
from gradtutor.ui.render import Look
from gradtutor.ui.screen import Screen
from gradtutor.ui.step_screens import Frame, screen_for
from gradtutor.walk.machine import beneath, choices_on_screen, screen_kind
from gradtutor.walk.state import WalkState


def screen(lesson: Lesson, state: WalkState, width: int, keys: bool, look: Look,
           folder: Path | None = None, place: tuple[int, int] | None = None) -> Screen:
    """Everything one screen of the walkthrough shows for this state; `folder` holds the
    exercise files; `place` is the lesson's in its course (position, total)."""
    step = lesson.steps[state.index]
    drawn = screen_for(step)
    choices = choices_on_screen(lesson, state)
    if state.help:
        body = help_body(beneath(lesson, state), keys, look, choices)
    else:
        body = drawn.body(step, state.view, Frame(lesson.id, width, look, folder or Path()))
    parts = list(body.renderables) if isinstance(body, Group) else [body]
    page = (state.index, state.help, drawn.page(state.view))
    focus = body.focus if isinstance(body, render.Focused) else None
    return Screen(render.header(lesson, state.index, width, look, place), parts, state.notice,
                  screen_kind(lesson, state), keys, look, choices, page, focus)
