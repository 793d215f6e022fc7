"""Parsons steps as lesson logic: the lines' `after` constraints read as a dependency graph
(so every order that respects them is right), the order a learner starts from, and the code a
correct order runs. Pure: no torch, no terminal, no files.

Grading an order into a verdict is the checking side's (`gradtutor.checking.parsons`).
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Iterable, Sequence

from gradtutor.lessons.model import Lesson, Parsons


def parsons_steps(lessons: Iterable[Lesson]) -> dict[str, Parsons]:
    """Every Parsons step in these lessons by id, in course order."""
    return {step.id: step for lesson in lessons for step in lesson.steps
            if isinstance(step, Parsons)}


def first_out_of_place(step: Parsons, order: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """The first line, in `order`, placed above a line its `after` names, with those lines
    (in the order `after` lists them); None when every constraint holds. `order` must hold
    each line exactly once."""
    position = {line_id: n for n, line_id in enumerate(order)}
    for n, line_id in enumerate(order):
        later = tuple(ref for ref in step.line(line_id).after if position[ref] > n)
        if later:
            return line_id, later
    return None


def is_correct(step: Parsons, order: Sequence[str]) -> bool:
    """Whether `order` holds every line once and satisfies every `after` constraint."""
    return (sorted(order) == sorted(line.id for line in step.lines)
            and first_out_of_place(step, order) is None)


def initial_order(step: Parsons) -> tuple[str, ...]:
    """The shuffled order the learner starts from: the same every time for a step (seeded by
    its id), and never already correct, so there is always something to do. (A step with
    no `after` constraints has no wrong order; it starts reversed.)"""
    ids = list(step.solution_order)
    rng = random.Random(f"parsons:{step.id}")
    for _ in range(200):
        rng.shuffle(ids)
        if first_out_of_place(step, ids) is not None:
            return tuple(ids)
    # constraints so loose that shuffles keep landing on right orders: a line that needs
    # another, moved to the very top, is out of place
    solution = list(step.solution_order)
    needy = next((i for i in solution if step.line(i).after), None)
    if needy is None:
        return tuple(reversed(solution))
    return (needy, *(i for i in solution if i != needy))


def run_series(step: Parsons) -> tuple[str, ...]:
    """The series the assembled code leaves: what to ask the runner for."""
    return (step.run.series,) if step.run is not None else ()


def assembled(step: Parsons, order: Sequence[str]) -> str:
    """The code a correct `order` runs: `run.setup`, then the lines as the body of a loop
    that records `run.record` after each pass in the list `run.series`. Without `run`, just
    the lines in order."""
    body = "\n".join(step.line(line_id).code.strip() for line_id in order)
    run = step.run
    if run is None:
        return body + "\n"
    loop = f"{body}\n{run.series}.append({run.record.strip()})"
    return (f"{run.setup.rstrip()}\n\n{run.series} = []\nfor _ in range({run.repeat}):\n"
            f"{textwrap.indent(loop, '    ')}\n")
