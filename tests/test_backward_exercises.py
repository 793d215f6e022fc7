"""Lesson 2's exercises judge how the learner got there where the lesson asks for a way, not
only the value: backward-a-vector wants backward() to start from the vector of errors, and
backward-twice-one-graph wants both passes through one graph. Each file runs as a real check
(tests/checker_batch.py: the worker's messages, judged by the tutor's side)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from checker_batch import checks_from, run_in_batch
from learner_files import BACKWARD_FILES

from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

SEEDS = (0, 7)

FILES = BACKWARD_FILES


def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """label -> the checks of each seed's run."""
    jobs, labels = [], []
    for label, (exercise_id, source, _, _) in FILES.items():
        step = exercise(exercise_id)
        for seed in SEEDS:
            jobs.append({"checker": request_checker(step), "function": step.function,
                         "source": dedent(source), "seed": seed})
            labels.append(label)
    folder: Path = tmp_path_factory.mktemp("backward-exercises")
    out: dict[str, list[list[Check]]] = {}
    for label, messages in zip(labels, run_in_batch(jobs, folder), strict=True):
        step = exercise(FILES[label][0])
        out.setdefault(label, []).append(
            checks_from(judge_of(step), step.function, messages))
    return out


@pytest.mark.parametrize("label", FILES)
def test_the_way_there_is_judged(verdicts: dict[str, list[list[Check]]], label: str) -> None:
    _, _, failing, words = FILES[label]
    for checks in verdicts[label]:
        said = "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)
        if failing is None:
            assert checks and all(c.status == "pass" for c in checks), said
        else:
            first = next(c for c in checks if c.status != "pass")
            assert (first.name, first.status) == (failing, "fail"), said
            assert words in str(first.message), said
