"""What a test knows and the types do not say: which kind of step is at a place in a lesson,
which kind of view is on screen, that a step id is there. Each asserts it, so a test that
knows wrong fails there, and returns it typed, so mypy checks what the test does with it."""

from __future__ import annotations

from typing import TypeVar

from gradtutor.lessons.model import Lesson
from gradtutor.walk.state import WalkState

T = TypeVar("T")


def index_of(lesson: Lesson, step_id: str) -> int:
    """The position of step `step_id`, which the lesson has."""
    index = lesson.index_of(step_id)
    assert index is not None, f"{lesson.id} has no step {step_id!r}"
    return index


def step_as(lesson: Lesson, where: int | str, kind: type[T]) -> T:
    """The step at position `where` (or with id `where`), which is a `kind`."""
    step = lesson.steps[where if isinstance(where, int) else index_of(lesson, where)]
    assert isinstance(step, kind), step
    return step


def view_as(state: WalkState, kind: type[T]) -> T:
    """The view on screen, which is a `kind` (a step of that kind is shown)."""
    assert isinstance(state.view, kind), state.view
    return state.view
