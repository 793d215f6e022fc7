"""What the loader needs to know about checking to validate an exercise, as a Protocol: the
checking package answers it (`gradtutor.checking.exercise_rules`) and the shell hands the
answer in, so the lesson model never imports the code that checks learners' work."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from gradtutor.lessons.model import Exercise
from gradtutor.lessons.schema import Loc


class ExerciseRules(Protocol):
    """The registered checkers an exercise may name, and what is wrong with the checks an
    exercise declares on an input family instead."""

    @property
    def checker_names(self) -> Sequence[str]:
        """Every name a lesson's `checker:` may use, in the order they are listed to authors."""
        ...

    @property
    def state(self) -> str:
        """The state of the code behind these rules (`gradtutor.files.code_state`): while it
        and a lesson's text stay the same, the lesson passes them as it did before."""
        ...

    def problems(self, exercise: Exercise, /) -> Iterable[tuple[str, Loc]]:
        """For an exercise with `inputs`, each thing wrong with its declared checks (an
        unknown family or fact, a condition that does not parse ...) with where it is, as a
        path inside the exercise: ("checks", 0, "expect", 1)."""
        ...
