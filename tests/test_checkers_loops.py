"""The checkers of the training-loop exercises (accumulate-micro-batches, fix-the-loop,
manual-sgd, grad-health), judged as the tutor judges them: learner files run in batch worker
processes (tests/checker_batch.py), and each checker's `judge` runs here, in the test process,
on the plain data that came back.

Correct solutions in several styles pass on 50 seeds; each mutant in the lesson fails, on 50
seeds, on the check it names (10 seeds, and the other 40 as `sweep` tests: tests/checker_suite.py);
other real mistakes fail with a message that names them; and hard-coded answers, lying objects
and a replaced `Tensor.backward` never pass.
"""

from __future__ import annotations

import functools
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any

import checker_batch
import pytest
from checker_suite import (
    DEFAULT_SEEDS,
    SEED_SETS,
    SWEEP_SEEDS,
    Run,
    assert_fail_on_every_seed,
    assert_pass_on_every_seed,
    corpus_runs,
    describe,
    failing,
    passed,
    run_batches,
    seeds_of,
)
from learner_files import LEFTOVERS_AND_BATCH_1, LOOP_MISTAKES, LOOP_STYLES

from gradtutor.checking.checkers import judge_of, request_checker, worker_checker
from gradtutor.checking.checkers.gradient_kinds import KINDS
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check, Verdict, overall, say, to_json
from gradtutor.i18n import Msg, load_catalog, translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Slide

HERE = Path(__file__).parent
FEW_SEEDS = range(5)
HARD_CODED_SEEDS = range(5)

EXERCISES = {  # exercise id -> (function, the slide it follows)
    "accumulate-micro-batches": ("accumulated_step", "right-order"),  # after fix-the-loop
    "fix-the-loop": ("train", "right-order"),
    "manual-sgd": ("manual_sgd", "no-optimizer"),
    "grad-health": ("grad_report", "debug-grads"),
}


@functools.cache
def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


def cases_of(exercise_id: str) -> Any:
    """The `cases(seed)` of the exercise's checker, as the worker draws them."""
    return worker_checker(request_checker(exercise(exercise_id))).cases


# Correct solutions, in the styles learners write them (tests/learner_files.py).
STYLES = LOOP_STYLES

# More mistakes learners make: (exercise, source, the check that must fail, words it says).
MISTAKES = LOOP_MISTAKES

# Mistakes that must fail on every seed, not only on the few the others run on: a mistake
# the inputs catch on some seeds only would pass for an unlucky learner.
EVERY_SEED = ("accumulate/closure-clears-in-the-loop", "loop/closure-never-clears",
              "loop/closure-clears-after-backward", "health/total-norm",
              "health/max-below-1e-6-means-dead", "health/norm-below-1e-9-means-dead",
              "health/allclose-to-zero-means-dead", "health/total-norm-by-clip-grad-norm",
              "health/small-means-dead")

# Files that try to pass without doing the work: (exercise, source, the check that catches it).
GAMING: dict[str, tuple[str, str, str]] = {
    # backward replaced by a function that writes .grad itself (adding, like the real one)
    "accumulate/fake-backward": ("accumulate-micro-batches", """
        import torch

        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            params = list(model.parameters())

            def backward(loss, *args, **kwargs):
                for p, g in zip(params, torch.autograd.grad(loss, params)):
                    p.grad = g if p.grad is None else p.grad + g

            torch.Tensor.backward = backward
            optimizer.zero_grad()
            for x, y in micro_batches:
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            optimizer.step()
    """, "backward-per-micro-batch"),
    # backward replaced by one that overwrites .grad, so the unfixed loop would look right
    "loop/fake-backward": ("fix-the-loop", """
        import torch

        def train(model, optimizer, loss_fn, batches):
            params = list(model.parameters())

            def backward(loss, *args, **kwargs):
                for p, g in zip(params, torch.autograd.grad(loss, params)):
                    p.grad = g

            torch.Tensor.backward = backward
            losses = []
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
    """, "backward-per-batch"),
    "sgd/fake-backward": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            def backward(loss, *args, **kwargs):
                (w.grad,) = torch.autograd.grad(loss, w)

            torch.Tensor.backward = backward
            for batch in batches:
                loss_fn(w, batch).backward()
                with torch.no_grad():
                    w -= lr * w.grad
    """, "backward-per-batch"),
    "loop/equal-to-everything": ("fix-the-loop", """
        class Anything:
            def __eq__(self, other):
                return True

            def __len__(self):
                return 0

        def train(model, optimizer, loss_fn, batches):
            for x, y in batches:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            return Anything()
    """, "returns-losses"),
    "loop/list-that-equals-everything": ("fix-the-loop", """
        class Losses(list):
            def __eq__(self, other):
                return True

        def train(model, optimizer, loss_fn, batches):
            for x, y in batches:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            return Losses([0.0] * len(batches))
    """, "returns-losses"),
    "loop/floats-that-equal-everything": ("fix-the-loop", """
        class Loss(float):
            def __eq__(self, other):
                return True

            __hash__ = float.__hash__

        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                losses.append(Loss(0.0))
            return losses
    """, "returns-losses"),
    "health/equal-to-everything": ("grad-health", """
        class Anything(dict):
            def __eq__(self, other):
                return True

            def __getitem__(self, key):
                return "ok"

            def get(self, key, default=None):
                return "ok"

        def grad_report(model, max_norm):
            return Anything()
    """, "returns-dict"),
    "health/strings-that-equal-everything": ("grad-health", """
        class Verdict(str):
            def __eq__(self, other):
                return True

            __hash__ = str.__hash__

        def grad_report(model, max_norm):
            return {name: Verdict("ok") for name, _ in model.named_parameters()}
    """, "classification"),
}


CORPUS = {exercise_id: exercise_id for exercise_id in EXERCISES}


def all_runs() -> list[Run]:
    """The default run: the sweep's files on the default seeds, and every other file."""
    runs = corpus_runs(STYLES, CORPUS, exercise, DEFAULT_SEEDS)
    runs += [Run(f"starter:{exercise_id}", exercise_id, exercise(exercise_id).starter, seed)
             for exercise_id in EXERCISES for seed in FEW_SEEDS]
    for label, (checker, source, _, _) in MISTAKES.items():
        runs += [Run(f"mistake:{label}", checker, dedent(source), seed)
                 for seed in (DEFAULT_SEEDS if label in EVERY_SEED else FEW_SEEDS)]
    for label, (checker, source, _) in GAMING.items():
        runs += [Run(f"gaming:{label}", checker, dedent(source), seed) for seed in FEW_SEEDS]
    runs += [Run("hard-coded:grad-health", "grad-health", hard_coded_report(seed), seed)
             for seed in HARD_CODED_SEEDS]
    return runs


def hard_coded_report(seed: int) -> str:
    """The right report for this seed's first case, returned for every case."""
    case = cases_of("grad-health")(seed)[0]
    report = {name: KINDS[kind] for name, kind in case["kinds"].items()}
    return f"def grad_report(model, max_norm):\n    return {report!r}\n"


def hard_coded_runs(first: dict[str, list[list[dict[str, Any]]]]) -> list[Run]:
    """Files that replay the reference answer of one case of their seed for every case,
    taken from the references the solution runs sent back."""
    runs: list[Run] = []
    for seed in HARD_CODED_SEEDS:
        loop = expected_of(first["solution:fix-the-loop"][seed])[0]
        losses = [step["loss"] for step in loop["steps"]]
        runs.append(Run("hard-coded:fix-the-loop", "fix-the-loop", dedent(f"""
            def train(model, optimizer, loss_fn, batches):
                for x, y in batches:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                return {losses!r}
        """), seed))
        sgd = expected_of(first["solution:manual-sgd"][seed])[0]
        runs.append(Run("hard-coded:manual-sgd", "manual-sgd", dedent(f"""
            import torch

            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    loss_fn(w, batch).backward()
                with torch.no_grad():
                    w.copy_(torch.tensor({sgd["final"]!r}, dtype=w.dtype))
        """), seed))
        acc = expected_of(first["solution:accumulate-micro-batches"][seed])[0]
        runs.append(Run("hard-coded:accumulate-micro-batches", "accumulate-micro-batches",
                        dedent(f"""
            import torch

            MEAN = {acc["mean"]!r}

            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                for x, y in micro_batches:
                    loss_fn(model(x), y).backward()
                for name, p in model.named_parameters():
                    p.grad = torch.tensor(MEAN[name], dtype=p.dtype)
                optimizer.step()
        """), seed))
    return runs


def expected_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    expected: list[dict[str, Any]] = next(m for m in messages
                                          if m["type"] == "expected")["expected"]
    return expected


def checks_from(checker: str, messages: list[dict[str, Any]]) -> list[Check]:
    """The checks the tutor shows for one run, decided as after a real check: an error in
    the learner's code is reported as such (`loads` or `runs`); otherwise the checker's judge
    decides, here, on plain data."""
    return checker_batch.checks_from(judge_of(exercise(checker)), EXERCISES[checker][0],
                                     messages)


def job(run: Run) -> dict[str, Any]:
    return {"checker": request_checker(exercise(run.checker)), "source": run.source,
            "seed": run.seed, "function": EXERCISES[run.checker][0]}


Results = dict[str, list[tuple[list[Check], list[dict[str, Any]]]]]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """label -> per seed: the checks of the run, and the messages the worker sent."""
    tmp = tmp_path_factory.mktemp("loop-checkers")
    runs = all_runs()
    messages = run_batches(runs, job, tmp)
    first: dict[str, list[list[dict[str, Any]]]] = {}
    for run, run_messages in zip(runs, messages, strict=True):
        first.setdefault(run.label, []).append(run_messages)
    second = hard_coded_runs(first)
    runs += second
    messages += run_batches(second, job, tmp / "hard-coded", processes=1)
    return by_label(runs, messages)


def by_label(runs: list[Run], messages: list[list[dict[str, Any]]]) -> Results:
    found: Results = {}
    for run, run_messages in zip(runs, messages, strict=True):
        found.setdefault(run.label, []).append(
            (checks_from(run.checker, run_messages), run_messages))
    return found


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """The sweep's files on the rest of the 50 seeds (only under `-m sweep`),
    as `results` gives them."""
    runs = corpus_runs(STYLES, CORPUS, exercise, SWEEP_SEEDS)
    runs += [Run(f"mistake:{label}", MISTAKES[label][0], dedent(MISTAKES[label][1]), seed)
             for label in EVERY_SEED for seed in SWEEP_SEEDS]
    return by_label(runs, run_batches(runs, job, tmp_path_factory.mktemp("loop-sweep")))


def checks_of(results: Results, label: str) -> list[list[Check]]:
    return [checks for checks, _ in results[label]]


# Correct answers pass.

def checks_in(request: pytest.FixtureRequest, seeds: str, label: str) -> list[list[Check]]:
    """The checks of `label`'s runs in the SEED_SETS fixture `seeds`."""
    return checks_of(request.getfixturevalue(seeds), label)


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
@pytest.mark.parametrize("label", [f"style:{checker}/{name}" for checker, styles in
                                   STYLES.items() for name in styles]
                         + [f"solution:{e}" for e in EXERCISES])
def test_correct_answers_pass_on_every_seed(request: pytest.FixtureRequest, seeds: str,
                                            label: str) -> None:
    assert_pass_on_every_seed(checks_in(request, seeds, label), seeds_of(seeds))


# Mistakes fail, on the check that names them.

MUTANTS = [(exercise_id, mutant.id, mutant.fails) for exercise_id in EXERCISES
           for mutant in exercise(exercise_id).mutants]


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
@pytest.mark.parametrize(("exercise_id", "mutant", "check"), MUTANTS,
                         ids=[f"{e}/{m}" for e, m, _ in MUTANTS])
def test_each_mutant_fails_its_named_check_on_every_seed(
        request: pytest.FixtureRequest, seeds: str, exercise_id: str, mutant: str,
        check: str) -> None:
    assert_fail_on_every_seed(checks_in(request, seeds, f"mutant:{exercise_id}/{mutant}"),
                              seeds_of(seeds), check)


@pytest.mark.slow
@pytest.mark.parametrize(("label", "seeds"), [
    *[(label, "results") for label in MISTAKES],
    *[pytest.param(label, "swept", id=f"{label}-sweep", marks=pytest.mark.sweep)
      for label in EVERY_SEED]])
def test_realistic_mistakes_fail_with_a_message_that_names_them(
        request: pytest.FixtureRequest, label: str, seeds: str) -> None:
    _, _, check, words = MISTAKES[label]
    runs = checks_in(request, seeds, f"mistake:{label}")
    every_seed = seeds_of(seeds) if label in EVERY_SEED else FEW_SEEDS
    assert len(runs) == len(every_seed)
    for seed, checks in zip(every_seed, runs, strict=True):
        found = failing(checks, check)
        assert found, f"seed {seed}: {describe(checks)}"
        assert re.search(words, found.message, re.DOTALL), found.message


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_starters_do_not_pass(results: Results, exercise_id: str) -> None:
    for seed, checks in enumerate(checks_of(results, f"starter:{exercise_id}")):
        assert not passed(checks), f"seed {seed}: {describe(checks)}"
        assert all(c.status in ("pass", "fail", "skip") for c in checks), describe(checks)


@pytest.mark.slow
@pytest.mark.parametrize("label", list(GAMING))
def test_gaming_the_checker_does_not_pass(results: Results, label: str) -> None:
    check = GAMING[label][2]
    for seed, checks in enumerate(checks_of(results, f"gaming:{label}")):
        assert failing(checks, check), f"seed {seed}: {describe(checks)}"


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_a_hard_coded_answer_fails(results: Results, exercise_id: str) -> None:
    runs = checks_of(results, f"hard-coded:{exercise_id}")
    assert len(runs) == len(HARD_CODED_SEEDS)
    for seed, checks in enumerate(runs):
        assert not passed(checks), f"seed {seed}: {describe(checks)}"


# A learner reading Chinese reads every check in Chinese, evidence numbers unchanged.

@pytest.mark.slow
def test_every_check_of_every_run_has_a_chinese_translation(results: Results) -> None:
    catalog = {**load_catalog("zh-CN"), **checker_batch.lesson_catalog("zh-CN")}
    problems = {f"{label}: {problem}" for label, runs in results.items() for checks, _ in runs
                for problem in checker_batch.untranslated(checks, catalog)}
    assert sorted(problems) == []
    labels = {label.split(":")[0] for label in results}
    assert {"mutant", "starter", "solution"} <= labels


@pytest.mark.slow
def test_the_fix_the_loop_starter_fails_in_chinese_with_the_numbers_of_the_run(
        results: Results) -> None:
    from rich.cells import cell_len
    from rich.console import Console

    from gradtutor.ui.check_view import verdict_view
    from gradtutor.ui.render import Look

    zh = translator("zh-CN")
    checks, _ = results["starter:fix-the-loop"][0]
    verdict = Verdict("fix-the-loop", overall(tuple(checks)), tuple(checks), seed=0,
                      duration_ms=5)
    failed = [c for c in checks if c.status == "fail"]
    assert failed and any(c.evidence is not None for c in failed)

    def shown(width: int) -> str:
        out = io.StringIO()
        console = Console(width=width, file=out, force_terminal=False, color_system=None)
        console.print(verdict_view(verdict, Look(plain=False, tr=zh)))
        return out.getvalue()

    wide, narrow = shown(100), shown(60)
    squashed = "".join(wide.split())
    assert "还没通过" in wide and "提示：" in wide and "种子 0" in wide
    for check in failed:
        said = zh(check.message)
        assert re.search(r"[\u4e00-\u9fff]", said), said
        assert "".join(said.replace("`", "").split()) in squashed
        for row in check.evidence.rows if check.evidence else ():
            for cell in row:  # numbers and names exactly as the run gave them (a cell may wrap)
                for number in re.findall(r"-?\d[\d.e+-]*", say(zh, cell)):
                    assert number in wide
    assert all(cell_len(line) <= 60 for line in narrow.splitlines())

    document = to_json(verdict, zh)
    assert [c["name"] for c in document["checks"]] == [c.name for c in checks]
    assert [c["status"] for c in document["checks"]] == [c.status for c in checks]
    first = next(c for c in document["checks"] if c["status"] == "fail")
    assert re.search(r"[\u4e00-\u9fff]", first["message"] + first["help"])


# The words a learner reads: the mistake and its evidence, never the code of the fix.

# What a hint must not hold: a line of the fix, which only the exercise's hint ladder gives.
FIX_CODE = re.compile(r"w -=|torch\.no_grad|\.backward\(|= None|for batch in")


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_manual_sgd_hints_point_in_words_and_never_give_the_fix(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    labels = [label for label in results if "manual-sgd" in label or ":sgd/" in label]
    assert len(labels) > 10
    for label in labels:
        for checks in checks_of(results, label):
            for check in checks:
                assert not FIX_CODE.search(check.help), (label, check.name, check.help)


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_an_update_through_dot_data_passes_with_a_note_that_no_grad_is_the_safe_way(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    for checks in checks_of(results, "style:manual-sgd/data"):
        assert passed(checks), describe(checks)
        update = next(c for c in checks if c.name == "update")
        assert update.note == ("Your updates went through w.data: that works, but .data hides "
                               "the change from autograd's checks; an in-place update with "
                               "recording off, as the lesson shows, is the safe way.")
    for checks in checks_of(results, "style:manual-sgd/sub-in-place"):
        assert passed(checks) and not any(c.note for c in checks)


# Each check says what happened, with evidence from the run.

def numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d[\d.]*(?:e[+-]?\d+)?", cell)]


@pytest.mark.slow
def test_a_step_table_shows_the_step_that_went_wrong_with_numbers_that_add_up(
        results: Results) -> None:
    # one row, the step the message names: what it used is its batch's gradient plus the
    # previous batch's, the numbers of one run side by side (not a step 1 from another case)
    for checks, _ in results["mutant:fix-the-loop/clears-once"]:
        found = failing(checks, "per-batch-gradient")
        assert found is not None and found.evidence is not None
        assert found.message.startswith("Step 2 used the gradient of batch 1 plus batch 2")
        assert found.evidence.columns == ("step", "gradient it used", "gradient of its batch",
                                          "gradient of batch 1")
        ((step, used, own, previous),) = found.evidence.rows
        assert step == "2"
        for total, a, b in zip(numbers(used), numbers(own), numbers(previous), strict=True):
            assert total == pytest.approx(a + b, rel=2e-3, abs=2e-4)


@pytest.mark.slow
def test_leftovers_in_step_1_are_one_account_not_a_second_case_s_steps(
        results: Results) -> None:
    # the unfixed starter: its first step used the caller's leftovers and batch 1's gradient;
    # no other case's steps are judged beside that, so no "batch 1" has two gradients and
    # nothing claims that each step used only its own batch's gradient
    for seed, (checks, _) in enumerate(results["starter:fix-the-loop"]):
        leftover, per_batch = failing(checks, "clears-leftovers"), next(
            c for c in checks if c.name == "per-batch-gradient")
        assert leftover is not None and re.match(LEFTOVERS_AND_BATCH_1, leftover.message), (
            f"seed {seed}: {describe(checks)}")
        assert per_batch.status == "skip" and per_batch.evidence is None, describe(checks)
        assert per_batch.message == "not judged until clears-leftovers passes"


@pytest.mark.slow
def test_the_leftover_table_shows_what_was_in_grad_before_the_call(results: Results) -> None:
    checks, messages = results["mutant:accumulate-micro-batches/keeps-leftovers"][0]
    found = failing(checks, "clears-leftovers")
    assert found is not None and found.evidence is not None
    assert found.evidence.columns == ("parameter", "leftover .grad before your call",
                                      "your step used", "should have used")
    expected = expected_of(messages)
    case = next(e for e in expected if e["leftovers"])
    assert [row[0] for row in found.evidence.rows] == case["names"]


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_the_scale_of_a_wrong_step_is_the_number_of_micro_batches(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    for checks, messages in results["mutant:accumulate-micro-batches/not-divided"]:
        found = failing(checks, "step-gradient")
        assert found is not None
        cases = next(m for m in messages if m["type"] == "expected")["cases"]
        assert f"a gradient {cases[0]['batches']}× too large" in found.message


@pytest.mark.slow
def test_any_other_scale_is_written_with_three_digits(results: Results) -> None:
    for checks, _ in results["mistake:accumulate/clips-the-gradient"]:
        found = failing(checks, "step-gradient")
        assert found is not None
        factor = re.match(r"The step used (\S+)× ", found.message)
        assert factor is not None and factor[1] == f"{float(factor[1]):.3g}", found.message


def test_a_declared_field_with_a_format_formats_the_number_itself() -> None:
    from gradtutor.checking.checkers.declared import Case, words

    run = Case({"step-times": 0.0029812345, "batch-count": 4.0, "step-missing": "0.bias"},
               {}, ((), ()))
    said = words("{step-times:.3g}× of {batch-count} ({step-missing})", run)
    assert said == "0.00298× of 4 (0.bias)"
    assert isinstance(said, Msg)  # the words remember their template, for a translator
    assert said.template == "{step-times:.3g}× of {batch-count} ({step-missing})"


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_grad_health_names_the_misclassified_parameters(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    for checks, _ in results["mutant:grad-health/norm-only"]:
        found = failing(checks, "classification")
        assert found is not None and found.evidence is not None
        assert found.evidence.columns == ("parameter", "its gradient", "should be", "yours")
        assert all(row[2] == "exploding" and row[3] == "ok" for row in found.evidence.rows)
        assert any(re.fullmatch(r"\d+ nan of \d+ entries", row[1])
                   for row in found.evidence.rows)


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_a_crash_on_a_none_gradient_is_explained_not_reported_as_an_error(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    for checks, _ in results["mutant:grad-health/no-none-check"]:
        assert [c.status for c in checks] == ["pass", "fail"], describe(checks)


# The cases exercise every clause of the contracts.

@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_norms_sit_just_above_and_just_below_max_norm(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: Results = request.getfixturevalue(seeds)
    for seed, (_, messages) in zip(seeds_of(seeds), results["solution:grad-health"],
                                       strict=True):
        by_kind: dict[str, list[float]] = {}
        sent = next(m for m in messages if m["type"] == "expected")
        for case, expected in zip(sent["cases"], sent["expected"], strict=True):
            for info in expected["params"].values():
                if info["norm"] is not None:
                    by_kind.setdefault(info["kind"], []).append(info["norm"] / case["max_norm"])
        assert all(1 < r < 1.05 for r in by_kind["above"]), seed
        assert all(0.95 < r < 1 for r in by_kind["below"]), seed


@pytest.mark.parametrize("checker", list(EXERCISES))
def test_inputs_differ_from_seed_to_seed(checker: str) -> None:
    cases = cases_of(checker)
    assert len({json.dumps(cases(seed)) for seed in range(100)}) == 100


@pytest.mark.parametrize("checker", ["accumulate-micro-batches", "fix-the-loop"])
def test_loop_cases_mix_leftovers_groups_losses_and_sizes(checker: str) -> None:
    cases = cases_of(checker)
    for seed in range(200):
        found = cases(seed)
        assert {case["leftovers"] for case in found} == {True, False}
        assert any(case["groups"] == 2 for case in found)
        assert all(2 <= case["batches"] <= 5 for case in found)
    every = [case for seed in range(50) for case in cases(seed)]
    assert {case["loss"] for case in every} == {"mse", "l1", "smooth-l1", "huber",
                                               "cross-entropy"}
    assert {case["optimizer"] for case in every} == {"sgd", "momentum", "adam", "adamw"}
    assert {case["batches"] for case in every} == {2, 3, 4, 5}


def test_every_seed_has_every_kind_of_gradient_health() -> None:
    cases = cases_of("grad-health")
    for seed in range(200):
        kinds = [set(case["kinds"].values()) for case in cases(seed)]
        assert set().union(*kinds) == set(KINDS)
        assert sum("none" in k for k in kinds) == 2  # two cases with an unused layer


def test_manual_sgd_cases_vary_shape_loss_and_batch_count() -> None:
    every = [case for seed in range(50) for case in cases_of("manual-sgd")(seed)]
    assert {case["outputs"] for case in every} == {None, 2, 3}
    assert {case["loss"] for case in every} == {"mse", "l1", "huber", "logistic"}
    assert {case["batches"] for case in every} == {2, 3, 4, 5}


def test_the_judges_need_no_torch() -> None:
    code = ("import sys\n"
            "from gradtutor.checking.checkers import CHECKERS, judge_of, load\n"
            "from gradtutor.checking.exercise_rules import EXERCISE_RULES\n"
            "from gradtutor.lessons.course import load_course\n"
            "for name in CHECKERS:\n"
            "    load(name).judge\n"
            "declared = [judge_of(step) for lesson in load_course(rules=EXERCISE_RULES).lessons\n"
            "            for step in lesson.steps if getattr(step, 'inputs', None)]\n"
            "assert len(declared) >= 5, declared\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=HERE.parent, timeout=60)
    assert done.returncode == 0, done.stderr


# The lesson places each exercise after the slide it practises: the nearest slide
# before it, with at most other practice steps (predict, Parsons, demo) between.

@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_each_exercise_follows_its_slide(exercise_id: str) -> None:
    function, slide = EXERCISES[exercise_id]
    lesson = load_course(rules=EXERCISE_RULES).find("grad")
    index = lesson.index_of(exercise_id)
    assert index is not None
    before = next(s for s in reversed(lesson.steps[:index]) if isinstance(s, Slide))
    assert before.id == slide
    step = lesson.steps[index]
    assert isinstance(step, Exercise)
    assert step.function == function
    assert step.checker in (exercise_id, None)  # its own checker, or checks it declares
    assert len(step.hints) >= 3 and len(step.mutants) >= 4
