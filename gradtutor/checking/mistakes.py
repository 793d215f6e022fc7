"""Known mistakes: a learner's file that is one of the lesson's declared mutants, the real
mistakes an author listed for the exercise, gets that mistake named beside the check it fails.

Pure and torch-free: files are compared as parsed code (layout and comments aside), never
run. A file the parser rejects, or one too deeply nested to parse, matches nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import functools

from gradtutor.checking.verdict import Check
from gradtutor.lessons.model import Exercise, Mutant


def mutant_source(exercise: Exercise, index: int) -> str:
    """The exercise's solution with mutant `index`'s edits applied."""
    source = exercise.solution
    for edit in exercise.mutants[index].replace:
        source = source.replace(edit.find, edit.with_, 1)
    return source


def _code(source: str) -> str | None:
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=64)
def _mutant_codes(exercise: Exercise) -> tuple[str | None, ...]:
    """Each declared mutant of the exercise as code: the same for every check of it, so
    parsed once, not after each of the learner's saves."""
    return tuple(_code(mutant_source(exercise, index))
                 for index in range(len(exercise.mutants)))


def known_mistake(exercise: Exercise, source: str) -> Mutant | None:
    """The declared mutant the learner's file is, as code; None if it is none of them."""
    code = _code(source)
    if code is None:
        return None
    return next((mutant for mutant, mutant_code in zip(exercise.mutants,
                                                       _mutant_codes(exercise), strict=True)
                 if mutant_code == code), None)


def name_known_mistake(exercise: Exercise, source: str,
                       checks: tuple[Check, ...]) -> tuple[Check, ...]:
    """`checks`, with the mistake named on the check that catches it (`Check.mistake`),
    when the file is a declared mutant and that check failed."""
    if not any(check.status == "fail" for check in checks):
        return checks  # no note goes on a check that did not fail: nothing to look for
    mutant = known_mistake(exercise, source)
    if mutant is None:
        return checks
    return tuple(dataclasses.replace(check, mistake=mutant.mistake)
                 if check.name == mutant.fails and check.status == "fail" and not check.note
                 else check for check in checks)
