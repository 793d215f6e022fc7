"""Each verdict is true of the learner's own code: a clip before backward() is told that it
clipped before backward() (not the clip-after-step mistake, nor to return what it did
return); a method named without its call and then used as a value is explained from the
learner's line, not left as a traceback; fix-the-loop's unfixed starter and a loop that
clears at the end of each step get one account of one run (the leftovers in step 1), never a
second case's steps beside it nor "each step used only its own batch's gradient".

Each file runs as a real check (tests/checker_batch.py: the worker's messages, judged by the
tutor's side), on seeds that include the one the review reproduced the starter's verdict on.
"""

from __future__ import annotations

import re
from pathlib import Path
from textwrap import dedent

import pytest
from checker_batch import checks_from, run_in_batch
from learner_files import TRUE_VERDICT_FILES

from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check
from gradtutor.i18n import load_catalog, translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

SEEDS = (0, 7, 82444923)

FILES = TRUE_VERDICT_FILES


def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


def source_of(label: str) -> str:
    exercise_id, source, _, _ = FILES[label]
    return exercise(exercise_id).starter if source == "STARTER" else dedent(source)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """label -> the checks of each seed's run."""
    jobs, labels = [], []
    for label, (exercise_id, _, _, _) in FILES.items():
        step = exercise(exercise_id)
        for seed in SEEDS:
            jobs.append({"checker": request_checker(step), "function": step.function,
                         "source": source_of(label), "seed": seed})
            labels.append(label)
    folder: Path = tmp_path_factory.mktemp("true-verdicts")
    out: dict[str, list[list[Check]]] = {}
    for label, messages in zip(labels, run_in_batch(jobs, folder), strict=True):
        step = exercise(FILES[label][0])
        out.setdefault(label, []).append(checks_from(judge_of(step), step.function, messages))
    return out


@pytest.mark.parametrize("label", FILES)
def test_the_verdict_says_what_the_file_did(verdicts: dict[str, list[list[Check]]],
                                            label: str) -> None:
    _, _, expected, foreign = FILES[label]
    for seed, checks in zip(SEEDS, verdicts[label], strict=True):
        said = f"seed {seed}: " + "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)
        named = {c.name: c for c in checks}
        for name, (status, words) in expected.items():
            assert name in named and named[name].status == status, said
            assert re.search(words, str(named[name].message)), said
        for check in checks:
            assert not re.search(foreign, str(check.message)), said


def test_an_uncalled_method_is_explained_in_chinese_too(
        verdicts: dict[str, list[list[Check]]]) -> None:
    zh = translator("zh-CN")
    catalog = load_catalog("zh-CN")
    (check,) = verdicts["log:item-not-called"][0]
    assert check.message.template in catalog  # type: ignore[attr-defined]
    said = zh(check.message)
    assert "`loss.item`" in said and "没有调用它" in said and "TypeError" in said, said
