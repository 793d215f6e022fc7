"""The facts of the input families on a small model (`checkers/model_facts.py`): `model-setup`,
`clip-step`, `evaluation` and `checkpoint`.

Each learner file below runs as a real check would run it (tests/checker_batch.py: a worker's
`evaluate`, real torch, the trace installed), in one process beside this one; the families'
facts are then read here, in the test process, from the plain data that came back, exactly
as the tutor reads them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any, TypedDict

import pytest
from learner_files import MODEL_FILES

from gradtutor.checking.checkers import request_checker, worker_checker
from gradtutor.checking.checkers.common import close
from gradtutor.checking.checkers.declared import holds
from gradtutor.checking.checkers.families import FAMILIES
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.protocol import CheckerRef
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

HERE = Path(__file__).parent
SEEDS = (0, 1, 2)

# label -> (exercise whose family and solution are used, learner source)
FILES = MODEL_FILES


# label -> per seed, the facts of each case
Found = dict[str, list[list[dict[str, Any]]]]


class Job(TypedDict):
    """One check for tests/checker_batch.py to run."""

    checker: CheckerRef
    function: str
    source: str
    seed: int


def exercise(exercise_id: str) -> Exercise:
    step = load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)
    assert isinstance(step, Exercise)
    return step


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> Found:
    """label -> per seed, the facts of each case, read from a real check's plain data."""
    jobs: list[Job] = []
    keys: list[tuple[str, Exercise]] = []
    for label, (exercise_id, source) in FILES.items():
        step = exercise(exercise_id)
        code = step.solution if source == "SOLUTION" else dedent(source)
        for seed in SEEDS:
            jobs.append(Job(checker=request_checker(step), function=step.function, source=code,
                            seed=seed))
            keys.append((label, step))
    tmp = tmp_path_factory.mktemp("model-facts")
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(HERE / "checker_batch.py"), str(tmp / "jobs.json"),
                           str(tmp / "results.json")], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp / "results.json").read_text())
    out: Found = {}
    for (label, step), messages, job in zip(keys, results, jobs, strict=True):
        family = FAMILIES[str(step.inputs)]
        expected = next(m for m in messages if m["type"] == "expected")
        observed = next(m for m in messages if m["type"] == "observed")["observed"]
        cases = worker_checker(job["checker"]).cases(job["seed"])
        assert expected["cases"] == cases
        for seen in observed:
            assert "error" not in seen, (label, seen)
        out.setdefault(label, []).append(
            [family.facts(case, ref, seen, ()) for case, ref, seen in
             zip(cases, expected["expected"], observed, strict=True)])
    return out


def every(found: Found, label: str) -> list[dict[str, Any]]:
    """The facts of every case of every seed."""
    return [case for seed in found[label] for case in seed]


# ---- model-setup ----------------------------------------------------------------------------

def test_freezing_the_first_layer_leaves_its_grad_none_and_its_weights_unmoved(
    facts: Found,
) -> None:
    for case in every(facts, "setup:solution"):
        assert case["frozen"] == "'0.weight', '0.bias'"
        assert (case["not-frozen-count"], case["wrongly-frozen-count"]) == (0, 0)
        assert case["trainable-count"] == case["total"] - 2 >= 2
        assert case["trained"] and case["frozen-grads-none"]
        # the optimizer (momentum, weight decay) skipped them; every other weight moved
        assert not case["frozen-moved"] and case["trainable-moved"]
        assert (case["module-flag-set"], case["in-eval"]) == (False, False)
        assert case["returned-kind"] == "none"


def test_a_flag_on_the_module_freezes_nothing_and_is_named(facts: Found) -> None:
    for case in every(facts, "setup:module-flag"):
        assert case["module-flag-set"] and case["module-flags"] == "model[0]"
        assert case["frozen-count"] == 0 and case["not-frozen"] == "'0.weight', '0.bias'"
        assert case["trainable-moved"]  # every weight, the first layer's too


def test_eval_mode_is_seen_and_freezes_nothing(facts: Found) -> None:
    for case in every(facts, "setup:eval"):
        assert case["in-eval"] and case["eval-modules"] == "model[0]"
        assert case["not-frozen-count"] == 2 and case["trainable-moved"]


def test_a_whole_frozen_model_cannot_train(facts: Found) -> None:
    for case in every(facts, "setup:whole-model"):
        assert case["trainable-count"] == 0 and not case["trained"]
        assert case["wrongly-frozen-count"] == case["total"] - 2
        assert case["frozen-grads-none"] and not case["frozen-moved"]


def test_what_the_function_returned_is_a_fact(facts: Found) -> None:
    assert {case["returned"] for case in every(facts, "setup:returns")} == {3.0}


# ---- clip-step -------------------------------------------------------------------------------

def test_the_right_step_uses_the_clipped_gradient_and_returns_the_norm_before(facts: Found) -> None:
    cases = every(facts, "clip:solution")
    for case in cases:
        assert close(case["step-grads"], case["clipped-grads"])
        assert (case["backward-count"], case["step-count"], case["zero-grad-count"]) == (1, 1, 1)
        assert close(case["returned"], case["norm-before"])
        assert close(case["step-grads-norm"], case["norm-after"])
        assert not (case["kept-leftovers"] or case["clipped-each"] or case["unclipped"])
    # in every seed, two cases clip and one does not
    for seed in facts["clip:solution"]:
        assert sorted(case["clipping-needed"] for case in seed) == [False, True, True]
    clipped = [case for case in cases if case["clipping-needed"]]
    assert all(case["norm-after"] == case["max-norm"] < case["norm-before"] for case in clipped)


def test_clipping_after_the_step_is_seen_as_an_unclipped_step(facts: Found) -> None:
    for case in every(facts, "clip:after-step"):
        assert close(case["step-grads"], case["raw-grads"])
        assert case["unclipped"] == case["clipping-needed"]
        assert close(case["returned"], case["norm-before"])  # the norm itself is right


def test_leftovers_in_grad_are_seen(facts: Found) -> None:
    for case in every(facts, "clip:leftovers"):
        assert case["kept-leftovers"] and case["zero-grad-count"] == 0
        assert not close(case["step-grads"], case["clipped-grads"])


def test_clipping_each_parameter_alone_is_seen(facts: Found) -> None:
    cases = every(facts, "clip:each")
    for case in cases:
        assert case["returned-kind"] == "none" and case["returned"] is None
        if case["clipping-needed"]:
            assert case["clipped-each"]
            assert case["step-grads-norm"] > case["max-norm"] * 1.0001
    assert any(case["clipped-each"] for case in cases)


def test_no_step_and_the_norm_after_clipping(facts: Found) -> None:
    for case in every(facts, "clip:no-step"):
        assert case["step-count"] == 0 and case["step-grads"] is None
        assert close(case["returned"], case["norm-after"])
        assert close(case["returned"], case["norm-before"]) == (not case["clipping-needed"])


# ---- evaluation ------------------------------------------------------------------------------

def test_a_right_evaluation_runs_in_eval_mode_without_a_graph(facts: Found) -> None:
    for case in every(facts, "eval:solution"):
        assert case["forward-count"] == case["batch-count"] >= 2
        assert not case["forward-in-train-mode"] and not case["graph-built"]
        assert case["mode-after"] == "train"
        assert not case["stats-changed"] and not case["weights-moved"]
        assert case["backward-count"] == 0
        assert close(case["returned"], case["mean-loss"])


def test_training_mode_changes_batch_norms_running_averages(facts: Found) -> None:
    cases = every(facts, "eval:train-mode")
    for case in cases:
        assert case["forward-in-train-mode"] and case["stats-changed"]
        assert not case["graph-built"]  # no_grad was there
    # dropout and the batch's statistics change the loss; it can coincide only where no unit
    # survives ReLU and dropout in either mode (the output is then the last layer's bias)
    differ = [not close(case["returned"], case["loss-sum"]) for case in cases]
    assert sum(differ) >= len(cases) * 2 // 3


def test_eval_without_no_grad_records_a_graph(facts: Found) -> None:
    for case in every(facts, "eval:graph"):
        assert case["graph-built"] and not case["forward-in-train-mode"]
        assert case["mode-after"] == "eval"
        assert close(case["returned"], case["last-batch-loss"])  # a tensor of one number


def test_a_one_number_tensor_is_seen_as_a_tensor_where_a_float_is_asked_for(
        facts: Found) -> None:
    step = exercise("evaluate-without-grad")
    check = next(c for c in step.checks if c.id == "returns-mean")
    for case in every(facts, "eval:tensor"):
        assert close(case["returned"], case["mean-loss"]) and case["returned-kind"] == "tensor"
        assert not all(holds(condition, case, {}) for condition in check.expect)
    for case in every(facts, "eval:solution"):
        assert case["returned-kind"] is None
        assert all(holds(condition, case, {}) for condition in check.expect)


def test_a_model_left_in_eval_mode_is_seen(facts: Found) -> None:
    for case in every(facts, "eval:stays"):
        assert case["mode-after"] == "eval" and case["returned-kind"] == "none"


# ---- checkpoint ------------------------------------------------------------------------------

def test_a_checkpoint_of_both_state_dicts_resumes_exactly(facts: Found) -> None:
    for case in every(facts, "checkpoint:solution"):
        assert case["load-error"] is None and not case["wrote-nothing"]
        assert case["saved-keys"] == "'model', 'optimizer'"
        assert case["model-restored"] and case["resumes"]
        assert not case["weights-moved"]


def test_objects_are_refused_by_torch_load(facts: Found) -> None:
    for case in every(facts, "checkpoint:object"):
        assert case["load-error"].startswith("UnpicklingError: Weights only load failed")
        assert "model-restored" not in case  # nothing to judge it by


def test_a_bare_model_state_dict_is_seen(facts: Found) -> None:
    for case in every(facts, "checkpoint:model-only"):
        assert case["model-only"] and not case["has-model"] and not case["model-restored"]


def test_without_the_optimizer_the_next_step_differs(facts: Found) -> None:
    # momentum and Adam both carry state: a fresh optimizer steps differently
    for case in every(facts, "checkpoint:no-optimizer"):
        assert case["model-restored"] and not case["has-optimizer"]
        assert not case["resumes"]


def test_state_dicts_in_the_wrong_places_fail_to_load_and_say_why(facts: Found) -> None:
    for case in every(facts, "checkpoint:swapped"):
        assert not case["model-restored"] and not case["resumes"]
        assert case["model-error"] is not None and case["optimizer-error"] is not None


def test_an_empty_file_is_seen(facts: Found) -> None:
    for case in every(facts, "checkpoint:nothing"):
        assert case["wrote-nothing"] and case["load-error"] is None


def test_inputs_differ_from_seed_to_seed() -> None:
    for exercise_id in ("freeze-layer", "clip-and-step", "evaluate-without-grad",
                        "save-checkpoint"):
        cases = worker_checker(request_checker(exercise(exercise_id))).cases
        assert len({json.dumps(cases(seed)) for seed in range(50)}) == 50
