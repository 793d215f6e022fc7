"""No answer carries an exercise's fix: the calls and statements of its solution, or of the
code its last hint shows, that its starter does not already hold. Answers are built from
the course's teaching text, which holds no solution, but a slide's snippet may show the very
call an exercise asks for; on that exercise's screen such a snippet or sentence is held
back, and nowhere is a whole solution shown. Code is compared with layout, case and backquotes
aside. Pure.
"""

from __future__ import annotations

import ast
import re
from functools import cache

from gradtutor.lessons.model import Exercise


def squashed(text: str) -> str:
    """Text or code with layout, backquotes and case aside."""
    return re.sub(r"[\s`]+", "", text).lower()


def fragments(source: str) -> set[str]:
    """The calls and simple statements of some code, each as one piece."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return,
                             ast.Delete, ast.Call)):
            out.add(ast.unparse(node))
        if isinstance(node, ast.withitem):
            out.add("with " + ast.unparse(node.context_expr))
    return out


@cache
def fix_of(exercise: Exercise) -> frozenset[str]:
    """The exercise's fix, squashed: what its solution and its last hint's code have that
    its starter does not."""
    found = fragments(exercise.solution)
    for span in re.findall(r"`([^`]+)`", exercise.hints[-1]):
        found |= fragments(span)
    starter = squashed(exercise.starter)
    pieces = {squashed(p) for p in found - fragments(exercise.starter)}
    return frozenset(p for p in pieces if p not in starter and len(p) > 3)


def carries_fix(text: str, exercise: Exercise) -> bool:
    """Whether `text` shows any piece of the exercise's fix."""
    said = squashed(text)
    return any(piece in said for piece in fix_of(exercise))


@cache
def solution_lines(exercise: Exercise) -> tuple[str, ...]:
    """The lines of the exercise's solution that its starter does not hold, in order,
    squashed (comments and blank lines aside): what a learner would paste to pass."""
    starter = {squashed(line.split("#")[0]) for line in exercise.starter.splitlines()}
    lines = [squashed(line.split("#")[0]) for line in exercise.solution.splitlines()]
    return tuple(line for line in lines if line and line not in starter)


def shows_solution(text: str, exercise: Exercise) -> bool:
    """Whether `text` holds the exercise's solution: all its lines beyond the starter,
    wherever they are (one line alone is a call a slide teaches, not a solution)."""
    lines = solution_lines(exercise)
    said = squashed(text)
    return len(lines) > 1 and all(line in said for line in lines)
