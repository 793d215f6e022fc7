"""The checkers of the first four exercises (read-grad, none-before-backward, two-backwards,
set-to-none), judged as the tutor judges them: learner files run in worker processes
(tests/checker_batch.py, all of them in two processes), and each checker's `judge` runs here, in
the test process, on the plain data that came back.

Correct solutions in several styles pass on 50 seeds; each mutant in the lesson fails, on 50
seeds, on the check it names (10 seeds, and the other 40 as `sweep` tests: tests/checker_suite.py);
other real mistakes fail with a message that names them; and hard-coded answers, lying objects,
printed text and a fake `Tensor.backward` never pass.
"""

from __future__ import annotations

import functools
import json
import re
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
    passed,
    run_batches,
    seeds_of,
)
from checker_suite import not_passing as failing
from learner_files import BASIC_MISTAKES, BASIC_STYLES

from gradtutor.checking.checkers import judge_of, request_checker, worker_checker
from gradtutor.checking.checkers.common import flat, shape
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check
from gradtutor.i18n import load_catalog
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Slide

HERE = Path(__file__).parent
FEW_SEEDS = DEFAULT_SEEDS

EXERCISES = {  # exercise id -> (its label here, function, the slide it follows)
    "read-grad": ("read-grad", "read_grad", "grad-attribute"),
    "none-before-backward": ("none-before-backward", "grad_before_and_after", "start-as-none"),
    "two-backwards": ("two-backwards", "grad_after_two_backwards", "grad-accumulates"),
    "clear-grads": ("set-to-none", "clear_grads", "set-to-none"),
}
CHECKER_OF = {checker: (exercise, function) for exercise, (checker, function, _) in
              EXERCISES.items()}


@functools.cache
def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


def spec(checker: str) -> Any:
    """What a check's request names as the checker of the exercise labelled `checker`."""
    return request_checker(exercise(CHECKER_OF[checker][0]))


# Correct solutions, in the styles learners write them (tests/learner_files.py).
STYLES = BASIC_STYLES

# Real mistakes beyond the lesson's mutants: (checker, source, the check that fails, words its
# message must contain).
MISTAKES = BASIC_MISTAKES

# Answers that must never pass, whatever they print or pretend.
LIAR = dedent("""
    class Liar:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __bool__(self):
            return True
""")
FAKE_BACKWARD = dedent("""
    import torch

    def fake_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        leaves, todo = [], [self.grad_fn]
        while todo:
            for node, _ in todo.pop().next_functions:
                if node is not None and hasattr(node, "variable"):
                    leaves.append(node.variable)
                elif node is not None:
                    todo.append(node)
        for leaf, grad in zip(leaves, torch.autograd.grad(self, leaves)):
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad

    torch.Tensor.backward = fake_backward
""")
HOSTILE: dict[str, tuple[str, str, str | None]] = {  # source, and the check that must fail
    "read-grad/liar": ("read-grad", LIAR + dedent("""
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return Liar()
    """), "returns-grad"),
    "read-grad/tensor-subclass-liar": ("read-grad", """
        import torch

        class Liar(torch.Tensor):
            def __eq__(self, other):
                return True

            def tolist(self):
                return "whatever you expected"

        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return torch.zeros_like(w).as_subclass(Liar)
    """, "returns-grad"),
    "read-grad/prints-passed": ("read-grad", """
        print("read-grad: passed")

        def read_grad(w, loss_fn):
            print("✓ runs-backward: passed\\n✓ returns-grad: passed\\nPassed")
    """, None),
    "read-grad/fake-backward": ("read-grad", FAKE_BACKWARD + dedent("""
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return w.grad
    """), "runs-backward"),
    "none-before-backward/liars": ("none-before-backward", LIAR + dedent("""
        def grad_before_and_after(w, loss_fn):
            loss_fn(w).backward()
            return Liar(), Liar()
    """), "before-is-none"),
    "none-before-backward/prints-passed": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            print("passed")
            return None, None
    """, None),
    "two-backwards/liar": ("two-backwards", LIAR + dedent("""
        def grad_after_two_backwards(w, loss_fn):
            loss_fn(w).backward()
            loss_fn(w).backward()
            return Liar()
    """), "doubled"),
    "two-backwards/fake-backward": ("two-backwards", FAKE_BACKWARD + dedent("""
        def grad_after_two_backwards(w, loss_fn):
            loss_fn(w).backward()
            loss_fn(w).backward()
            return w.grad
    """), "backward-twice"),
    "two-backwards/prints-passed": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            print("All checks passed")
    """, None),
    "set-to-none/prints-passed": ("set-to-none", """
        def clear_grads(optimizer):
            print("every .grad is None: passed")
    """, "all-none"),
    "set-to-none/grad-property": ("set-to-none", """
        import torch

        torch.nn.Parameter.grad = property(lambda self: None, lambda self, value: None)
        torch.Tensor.grad = property(lambda self: None, lambda self, value: None)

        def clear_grads(optimizer):
            pass
    """, "all-none"),
}


def hard_coded(checker: str, seed: int) -> str:
    """A file that returns, every time, the right answer for one of this seed's cases (the one
    whose loss is a sum of squares, so its gradient is 2 * w), and so is wrong for the rest."""
    case = next(c for c in worker_checker(spec(checker)).cases(seed) if c["loss"] == "squares")
    grad = json.dumps([2 * x for x in flat(case["w"]) or []])
    dims = json.dumps(list(shape(case["w"])))
    value = f"torch.tensor({grad}, dtype=torch.float64).reshape({dims})"
    body = {"read-grad": f"loss_fn(w).backward()\n    return {value}",
            "none-before-backward": f"loss_fn(w).backward()\n    return None, {value}",
            "two-backwards": f"loss_fn(w).backward()\n    loss_fn(w).backward()\n"
                             f"    return 2 * {value}"}[checker]
    function = CHECKER_OF[checker][1]
    return f"import torch\n\n\ndef {function}(w, loss_fn):\n    {body}\n"


CORPUS = {exercise_id: checker for exercise_id, (checker, _, _) in EXERCISES.items()}


def all_runs() -> list[Run]:
    """The default run: the sweep's files on the default seeds, and every other file."""
    runs = corpus_runs(STYLES, CORPUS, exercise, DEFAULT_SEEDS)
    for exercise_id, checker in CORPUS.items():
        runs += [Run(f"starter:{exercise_id}", checker, exercise(exercise_id).starter, seed)
                 for seed in FEW_SEEDS]
    for label, (checker, source, _, _) in MISTAKES.items():
        runs += [Run(f"mistake:{label}", checker, dedent(source), seed) for seed in FEW_SEEDS]
    for label, (checker, source, _) in HOSTILE.items():
        runs += [Run(f"hostile:{label}", checker, dedent(source), seed) for seed in FEW_SEEDS]
    for checker in ("read-grad", "none-before-backward", "two-backwards"):
        runs += [Run(f"hard-coded:{checker}", checker, hard_coded(checker, seed), seed)
                 for seed in FEW_SEEDS]
    return runs


def checks_from(checker: str, messages: list[dict[str, Any]]) -> list[Check]:
    """The checks the tutor shows for one run, decided as after a real check: an error in
    the learner's code is reported as such (`loads` or `runs`); otherwise the checker's judge
    decides, here, on plain data."""
    judge = judge_of(exercise(CHECKER_OF[checker][0]))
    return checker_batch.checks_from(judge, CHECKER_OF[checker][1], messages)


def job(run: Run) -> dict[str, Any]:
    return {"checker": spec(run.checker), "function": CHECKER_OF[run.checker][1],
            "source": run.source, "seed": run.seed}


def checks_by_label(runs: list[Run], tmp: Path) -> dict[str, list[list[Check]]]:
    """label -> the checks of each of its runs, one list per seed."""
    by_label: dict[str, list[list[Check]]] = {}
    for run, run_messages in zip(runs, run_batches(runs, job, tmp), strict=True):
        by_label.setdefault(run.label, []).append(checks_from(run.checker, run_messages))
    return by_label


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """label -> the checks of each of its runs on the default seeds."""
    return checks_by_label(all_runs(), tmp_path_factory.mktemp("checker-batch"))


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """The sweep's files on the rest of the 50 seeds (only under `-m sweep` or a whole run)."""
    return checks_by_label(corpus_runs(STYLES, CORPUS, exercise, SWEEP_SEEDS),
                           tmp_path_factory.mktemp("checker-sweep"))


# Correct answers pass.

@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
@pytest.mark.parametrize("label", [f"style:{checker}/{name}" for checker, styles in
                                   STYLES.items() for name in styles]
                         + [f"solution:{e}" for e in EXERCISES])
def test_correct_answers_pass_on_every_seed(request: pytest.FixtureRequest, seeds: str,
                                            label: str) -> None:
    assert_pass_on_every_seed(request.getfixturevalue(seeds)[label], seeds_of(seeds))


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
    assert_fail_on_every_seed(request.getfixturevalue(seeds)[f"mutant:{exercise_id}/{mutant}"],
                              seeds_of(seeds), check, failing)


@pytest.mark.slow
@pytest.mark.parametrize("label", list(MISTAKES))
def test_realistic_mistakes_fail_with_a_message_that_names_them(
        results: dict[str, list[list[Check]]], label: str) -> None:
    _, _, check, words = MISTAKES[label]
    for seed, checks in enumerate(results[f"mistake:{label}"]):
        found = failing(checks, check)
        assert found, f"seed {seed}: {describe(checks)}"
        assert re.search(words, found.message, re.DOTALL), found.message


@pytest.mark.slow
def test_autograd_grad_is_not_blamed_as_clearing_w_grad(
        results: dict[str, list[list[Check]]]) -> None:
    for checks in results["mistake:read-grad/autograd-grad"]:
        assert [(c.name, c.status) for c in checks] == [("runs-backward", "fail"),
                                                         ("returns-grad", "pass"),
                                                         ("grad-kept", "skip")]
        assert not any("cleared" in c.message for c in checks)
        assert checks[-1].message == "not judged: no backward pass ran"


@pytest.mark.slow
def test_a_second_backward_on_a_freed_graph_quotes_pytorch_once_with_its_evidence(
        results: dict[str, list[list[Check]]]) -> None:
    for label in ("mistake:two-backwards/same-loss-twice", "mutant:two-backwards/same-graph-twice"):
        for checks in results[label]:
            # the rest wait for the mistake that stopped the run to be fixed
            assert [(c.name, c.status) for c in checks] == [
                ("graph-freed", "fail"), ("backward-twice", "skip"), ("doubled", "skip"),
                ("grad-kept", "skip")]
            check = checks[0]
            assert check.evidence is not None
            said = [str(check.message), str(check.help)] + [
                str(cell) for row in check.evidence.rows for cell in row]
            error = "Trying to backward through the graph a second time"
            assert sum(text.count(error) for text in said) == 1
            assert check.evidence.rows[0][-1].startswith(f"RuntimeError: {error}")
            assert "Traceback" not in " ".join(said)


# What a hint must not hold: a line of the fix, which only the exercise's hint ladder gives.
FIX_CODE = re.compile(r"\.backward\(|return |zero_grad\(|= None|before = |before, after")


@pytest.mark.slow
@pytest.mark.parametrize("seeds", SEED_SETS)
def test_hints_point_in_words_and_never_give_the_code_of_the_fix(
        request: pytest.FixtureRequest, seeds: str) -> None:
    results: dict[str, list[list[Check]]] = request.getfixturevalue(seeds)
    for label, runs in results.items():
        for checks in runs:
            for check in checks:
                assert not FIX_CODE.search(check.help), (label, check.name, check.help)


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_starters_do_not_pass(results: dict[str, list[list[Check]]], exercise_id: str) -> None:
    for seed, checks in enumerate(results[f"starter:{exercise_id}"]):
        assert not passed(checks), f"seed {seed}: {describe(checks)}"


GAMING = [f"hostile:{label}" for label in HOSTILE] + [
    f"hard-coded:{checker}" for checker in ("read-grad", "none-before-backward", "two-backwards")]


@pytest.mark.slow
@pytest.mark.parametrize("label", GAMING)
def test_gaming_the_checker_does_not_pass(results: dict[str, list[list[Check]]],
                                          label: str) -> None:
    kind, name = label.split(":", 1)
    check = HOSTILE[name][2] if kind == "hostile" else None
    for seed, checks in enumerate(results[label]):
        assert not passed(checks), f"seed {seed}: {describe(checks)}"
        if check is not None:
            assert failing(checks, check), f"seed {seed}: {describe(checks)}"


@pytest.mark.slow
def test_a_hard_coded_answer_is_right_for_one_case_but_not_the_others(
        results: dict[str, list[list[Check]]]) -> None:
    # the hard-coded file really matches one case, so it fails for the right reason
    for checks in results["hard-coded:read-grad"]:
        assert [c.name for c in checks if c.status != "pass"] == ["returns-grad"]


@pytest.mark.slow
def test_messages_carry_evidence_from_the_run(results: dict[str, list[list[Check]]]) -> None:
    zeros = failing(results["mutant:clear-grads/keeps-zeros"][0], "all-none")
    assert zeros is not None and zeros.evidence is not None
    assert zeros.message.startswith("After your function, .grad was a tensor of zeros, not "
                                    "None: zero_grad(set_to_none=False) keeps the tensors")
    assert zeros.evidence.columns[0] == "param group"
    assert all(row[-1].lstrip("[").startswith("0") for row in zeros.evidence.rows)  # any shape

    groups = [failing(checks, "all-none") for checks in
              results["mutant:clear-grads/first-group-only"]]
    assert any(g is not None and "Parameters in the second and third param groups kept their "
               "gradients" in g.message for g in groups)

    cleared = failing(results["mutant:two-backwards/cleared-between"][0], "doubled")
    assert cleared is not None and cleared.evidence is not None
    assert cleared.message.startswith("Your .grad holds 1x the gradient: it was cleared between "
                                      "the two backward calls")
    three = failing(results["mutant:two-backwards/three-passes"][0], "doubled")
    assert three is not None and "3x the gradient: backward ran 3 times" in three.message

    zeros_before = failing(results["mutant:none-before-backward/zeros-before"][0],
                           "before-is-none")
    assert zeros_before is not None
    assert zeros_before.message == ("`before` was a tensor of zeros: PyTorch leaves .grad as "
                                    "None until the first backward.")
    alias = failing(results["mutant:read-grad/tidy-up-in-place"][0], "returns-grad")
    assert alias is not None and "use w.grad.clone()" in alias.message.lower()


# A learner reading Chinese reads every check in Chinese: whatever the run (solutions,
# starters, every mutant, mistakes, hostile files), each message, hint and evidence column
# is a message the zh-CN catalog translates, or words of the lesson its translation gives.

@pytest.mark.slow
def test_every_check_of_every_run_has_a_chinese_translation(
        results: dict[str, list[list[Check]]]) -> None:
    catalog = {**load_catalog("zh-CN"), **checker_batch.lesson_catalog("zh-CN")}
    problems = {f"{label}: {problem}" for label, runs in results.items() for checks in runs
                for problem in checker_batch.untranslated(checks, catalog)}
    assert sorted(problems) == []
    labels = {label.split(":")[0] for label in results}
    assert {"mutant", "starter", "solution"} <= labels


# The lesson places each exercise after the slide it practises: the nearest slide
# before it, with at most other practice steps (predict, Parsons, demo) between.

@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_each_exercise_follows_its_slide(exercise_id: str) -> None:
    checker, function, slide = EXERCISES[exercise_id]
    lesson = load_course(rules=EXERCISE_RULES).find("grad")
    index = lesson.index_of(exercise_id)
    assert index is not None
    before = next(s for s in reversed(lesson.steps[:index]) if isinstance(s, Slide))
    assert before.id == slide
    step = lesson.steps[index]
    assert isinstance(step, Exercise)
    assert step.function == function
    assert len(step.hints) >= 3 and len(step.mutants) >= 4


# Inputs vary by seed, so answers cannot be memorised.

@pytest.mark.parametrize("checker", list(CHECKER_OF))
def test_inputs_differ_from_seed_to_seed(checker: str) -> None:
    cases = worker_checker(spec(checker)).cases
    assert len({json.dumps(cases(seed)) for seed in range(100)}) == 100


def test_each_seed_has_four_different_losses() -> None:
    cases = worker_checker(spec("read-grad")).cases
    for seed in range(100):
        assert len({case["loss"] for case in cases(seed)}) == 4


def test_each_seed_has_optimizers_with_one_two_and_three_param_groups() -> None:
    cases = worker_checker(spec("set-to-none")).cases
    for seed in range(200):
        found = cases(seed)
        assert {1, 2, 3} <= {len(case["groups"]) for case in found}
        assert all(len(case["groups"][0]["params"]) >= 2 for case in found)
    assert {case["optimizer"] for seed in range(20) for case in cases(seed)} == {"SGD", "Adam"}
