"""Checking's answer to the loader's `ExerciseRules`: the checkers in the registry, and the
declared checks' validation. The shell builds the course with `EXERCISE_RULES`.

Light on purpose, since every command that shows a lesson loads it: no torch here, and the
declared checks' module only once an exercise declares checks."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradtutor.checking.checkers import CHECKERS
from gradtutor.files import code_state

if TYPE_CHECKING:
    from gradtutor.lessons.exercise_rules import ExerciseRules
    from gradtutor.lessons.model import Exercise
    from gradtutor.lessons.schema import Loc


@dataclass(frozen=True)
class RegisteredRules:
    """The rules of the checkers registered in `gradtutor.checking.checkers`."""

    checker_names: tuple[str, ...] = tuple(CHECKERS)

    @property
    def state(self) -> str:
        """The state of checking's modules, all of them (the declared checks' validation
        reaches across the families)."""
        return _checking_state()

    def problems(self, exercise: Exercise, /) -> list[tuple[str, Loc]]:
        from gradtutor.checking.checkers.declared import exercise_problems

        return exercise_problems(exercise)


@functools.cache
def _checking_state() -> str:
    return code_state(Path(__file__).parent)


EXERCISE_RULES: ExerciseRules = RegisteredRules()
