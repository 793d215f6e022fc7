"""Checking's answer to the loader's `ExerciseRules`: the checkers in the registry, and the
declared checks' validation. The shell builds the course with `EXERCISE_RULES`.

Light on purpose, since every command that shows a lesson loads it: no torch here, and the
declared checks' module only once an exercise declares checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gradtutor.checking.checkers import CHECKERS

if TYPE_CHECKING:
    from gradtutor.lessons.exercise_rules import ExerciseRules
    from gradtutor.lessons.model import Exercise
    from gradtutor.lessons.schema import Loc


@dataclass(frozen=True)
class RegisteredRules:
    """The rules of the checkers registered in `gradtutor.checking.checkers`."""

    checker_names: tuple[str, ...] = tuple(CHECKERS)

    def problems(self, exercise: Exercise, /) -> list[tuple[str, Loc]]:
        from gradtutor.checking.checkers.declared import exercise_problems

        return exercise_problems(exercise)


EXERCISE_RULES: ExerciseRules = RegisteredRules()
