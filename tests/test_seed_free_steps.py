"""The judged steps other than exercises say the same whatever the random state: a predict
step's snippet shows the same value, and an ordering step's assembled loop leaves the same
series (the losses whose fall the learner is told about), under any global seed. Else a
learner's prediction would be right on one run and wrong on the next. The lesson code is the
author's, trusted, so it runs here, in this process."""

from __future__ import annotations

import functools
import random

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Parsons, Predict, Step
from gradtutor.lessons.parsons import assembled

torch = pytest.importorskip("torch")
SEEDS = (0, 1, 7, 12345)


@functools.cache
def steps() -> list[Step]:
    return [step for lesson in load_course(None, rules=EXERCISE_RULES).lessons
            for step in lesson.steps]


def run(code: str, seed: int) -> dict[str, object]:
    """The namespace `code` leaves, run after the global random state is set from `seed`."""
    torch.manual_seed(seed)
    random.seed(seed)
    namespace: dict[str, object] = {}
    exec(compile(code, "<lesson>", "exec"), namespace)  # noqa: S102 - the author's code
    return namespace


PREDICTS = [s for s in steps() if isinstance(s, Predict)]
ORDERS = [s for s in steps() if isinstance(s, Parsons) and s.run is not None]


@pytest.mark.parametrize("step", PREDICTS, ids=[s.id for s in PREDICTS])
def test_a_prediction_s_snippet_shows_the_same_on_every_seed(step: Predict) -> None:
    shown = {repr(eval(step.show, run(step.code, seed))) for seed in SEEDS}  # noqa: S307
    assert len(shown) == 1, f"{step.id} shows {sorted(shown)} on seeds {SEEDS}"


@pytest.mark.parametrize("step", ORDERS, ids=[s.id for s in ORDERS])
def test_an_ordered_loop_leaves_the_same_series_on_every_seed(step: Parsons) -> None:
    assert step.run is not None
    code = assembled(step, step.solution_order)
    series = {repr(run(code, seed)[step.run.series]) for seed in SEEDS}
    assert len(series) == 1, f"{step.id} leaves {sorted(series)} on seeds {SEEDS}"
