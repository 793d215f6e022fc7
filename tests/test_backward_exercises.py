"""Lesson 2's exercises judge how the learner got there where the lesson asks for a way, not
only the value: backward-a-vector wants backward() to start from the vector of errors, and
backward-twice-one-graph wants both passes through one graph. Each file runs as a real check
(tests/checker_batch.py: the worker's messages, judged by the tutor's side)."""

from __future__ import annotations

from textwrap import dedent

import pytest
from checker_suite import checks_of_files
from learner_files import BACKWARD_FILES

from gradtutor.checking.verdict import Check

SEEDS = (0, 7)

FILES = BACKWARD_FILES


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """label -> the checks of each seed's run."""
    return checks_of_files({label: (eid, dedent(source))
                            for label, (eid, source, *_) in FILES.items()},
                           SEEDS, tmp_path_factory.mktemp("backward-exercises"))


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
