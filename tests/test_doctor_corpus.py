"""`gradtutor doctor` judges every script of tests/doctor_corpus/ right: each problem family
is found where it is, and no problem is reported on a correct loop (the official examples'
MNIST loop, nanoGPT-like accumulation with clipping, a GAN, L-BFGS, manual SGD, Hugging
Face-style accumulation and more). Each script's first line says what it should get:
`# expect: ID ...`, or `# expect:` alone for a correct one.

The scripts run under the real probe, each in a process of its own, forked from one that has
imported torch once (tests/doctor_runner.py), so that the 28 of them take seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradtutor.doctor.judge import PROBLEM_IDS, Diagnosis, diagnose

CORPUS = Path(__file__).parent / "doctor_corpus"
SCRIPTS = sorted(path.name for path in CORPUS.glob("*.py"))
RUNNER = Path(__file__).parent / "doctor_runner.py"


def expected(name: str) -> set[str]:
    first = (CORPUS / name).read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect:"), f"{name} must say what it expects on its first line"
    return set(first.split(":", 1)[1].split())


def unsure(name: str) -> set[str]:
    """What the doctor must say it could not tell: `# unsure: ID ...` on the second line;
    nothing, if the script does not say."""
    second = (CORPUS / name).read_text(encoding="utf-8").splitlines()[1]
    return set(second.split(":", 1)[1].split()) if second.startswith("# unsure:") else set()


def marked(name: str, problem: str) -> int | None:
    """The line a script marks `# ID here`: where the problem (or note) ID must be reported."""
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    found = [number for number, line in enumerate(lines, 1) if f"# {problem} here" in line]
    return found[0] if found else None


@pytest.fixture(scope="module")
def judged() -> dict[str, Diagnosis]:
    result = subprocess.run([sys.executable, str(RUNNER), "20", *(str(CORPUS / name)
                                                                 for name in SCRIPTS)],
                            capture_output=True, text=True, timeout=600, check=True)
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    return {Path(run["script"]).name: diagnose(run["events"]) for run in runs}


def test_the_corpus_has_every_family_and_correct_loops() -> None:
    families = set().union(*(expected(name) for name in SCRIPTS))
    assert families == set(PROBLEM_IDS)
    assert sum(not expected(name) for name in SCRIPTS) >= 10


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_is_judged_right(judged: dict[str, Diagnosis], name: str) -> None:
    diagnosis = judged[name]
    found = {finding.id for finding in diagnosis.findings}
    assert found == expected(name), [(f.id, f.summary, f.evidence) for f in diagnosis.findings]
    assert diagnosis.fault is None
    if diagnosis.error is not None:  # only where the error is the problem found
        assert any(diagnosis.error in value for f in diagnosis.findings for _, value in f.evidence)
    assert diagnosis.steps + diagnosis.backwards > 0 or diagnosis.error is not None
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    for finding in diagnosis.findings:  # each names a line of the script, with code on it
        assert finding.where is not None and finding.where.startswith(name + ":")
        number = int(finding.where.rsplit(":", 1)[1])
        assert lines[number - 1].strip() and not lines[number - 1].lstrip().startswith("#")
        assert finding.evidence
        assert marked(name, finding.id) in (None, number), finding.evidence


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_script_is_said_to_be_unclear_only_where_it_is(judged: dict[str, Diagnosis],
                                                          name: str) -> None:
    """A note only where the pattern is there: an evaluation in the script that the steps
    observed did not reach, not every stopped run; each at the line that has it."""
    notes = judged[name].notes
    assert {note.id for note in notes} == unsure(name), [(n.id, n.summary) for n in notes]
    for note in notes:
        assert marked(name, note.id) is None or note.where == f"{name}:{marked(name, note.id)}"


@pytest.mark.parametrize(("name", "cut"), [
    ("graph_broken.py", "graph_broken.py:15 (.detach())"),
    ("detached_output.py", "detached_output.py:13 (.detach())"),
    ("features_copied.py", "features_copied.py:16 (torch.tensor(...))"),
    ("loss_item.py", "loss_item.py:12 (.item())"),
    ("loss_rebuilt.py", "loss_rebuilt.py:13 (.item())"),
])
def test_a_cut_graph_is_reported_at_the_line_that_cut_it(judged: dict[str, Diagnosis],
                                                         name: str, cut: str) -> None:
    (finding,) = judged[name].findings
    assert finding.id == "graph-broken" and finding.where == cut.split(" ")[0]
    assert ("graph cut at", cut) in finding.evidence


def test_a_cut_the_probe_cannot_see_is_said_to_be_unseen_not_guessed(
        judged: dict[str, Diagnosis]) -> None:
    """`.data` is no call: the finding names the forward pass, and says the cut was not seen
    (the loss's own `.item()`, which reaches only the second layer, is not taken for it)."""
    (finding,) = judged["cut_by_data.py"].findings
    assert finding.where == "cut_by_data.py:25"
    assert ("graph cut at", "not seen (.data, or a call the doctor does not watch)") in (
        finding.evidence)


# What each graph problem's "what to do" says, applied to its script (old text, new text): the
# script so fixed must then be judged clean, with no note either.
FIXES = {
    "validation_with_dropout.py": [("    val_loss = evaluate()", "    with torch.no_grad():\n"
                                    "        val_loss = evaluate()")],
    "eval_graph.py": [("    val_loss = nn", "    with torch.no_grad():\n        val_loss = nn")],
    "eval_mode_training.py": [("for step in range(20):", "model.train()\nfor step in range(20):")],
    "eval_mode_after_validation.py": [("    for i in range(0, 32, 8):",
                                       "    model.train()\n    for i in range(0, 32, 8):")],
    "trains_in_inference_mode.py": [("with torch.inference_mode():", "if True:")],
    "trains_under_no_grad.py": [("    with torch.no_grad():\n        train_epoch()",
                                 "    train_epoch()")],
    "bias_detached.py": [("self.bias.detach()", "self.bias")],
    "weight_through_data.py": [("self.v.data", "self.v")],
    "graph_broken.py": [("        h = torch.tensor(h.detach().numpy())", "")],
}


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Diagnosis]:
    folder = tmp_path_factory.mktemp("fixed")
    for name, changes in FIXES.items():
        text = (CORPUS / name).read_text(encoding="utf-8")
        for old, new in changes:
            assert old in text, (name, old)
            text = text.replace(old, new)
        (folder / name).write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, str(RUNNER), "20", *(str(folder / name)
                                                                 for name in FIXES)],
                            capture_output=True, text=True, timeout=600, check=True)
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    return {Path(run["script"]).name: diagnose(run["events"]) for run in runs}


@pytest.mark.parametrize("name", sorted(FIXES))
def test_a_graph_problem_s_advice_fixes_it(fixed: dict[str, Diagnosis], name: str) -> None:
    assert expected(name), "a buggy script"
    diagnosis = fixed[name]
    assert [(f.id, f.summary) for f in (*diagnosis.findings, *diagnosis.notes)] == []
    assert diagnosis.fault is None and diagnosis.error is None and diagnosis.steps > 0


@pytest.mark.parametrize(("name", "told", "not_told"), [
    # a validation graph is told as one, not as training in eval mode
    ("validation_with_dropout.py", "torch.no_grad()", "model.train()"),
    ("eval_mode_after_validation.py", "again after evaluating", "torch.no_grad()"),
    ("trains_in_inference_mode.py", "ran inside torch.inference_mode()", "cut"),
    ("trains_under_no_grad.py", "ran inside torch.no_grad()", "cut"),
])
def test_a_graph_problem_is_told_as_what_it_is(judged: dict[str, Diagnosis], name: str,
                                               told: str, not_told: str) -> None:
    (finding,) = judged[name].findings
    summary = str(finding.summary)
    assert told in summary and not_told not in summary, summary


@pytest.mark.parametrize(("name", "cut", "params"), [
    ("bias_detached.py", "bias_detached.py:15 (.detach())", "model.0.bias, model.2.bias"),
    ("weight_through_data.py", "weight_through_data.py:15 (.data)", "model.0.v"),
])
def test_one_parameter_cut_from_a_layer_that_trains_is_found(
        judged: dict[str, Diagnosis], name: str, cut: str, params: str) -> None:
    """Judged per parameter: the layer's other parameter trains, and is not named."""
    (finding,) = judged[name].findings
    assert ("graph cut at", cut) in finding.evidence
    assert ("parameters", params) in finding.evidence


def test_clipped_gradients_are_shown_before_and_after_clipping(
        judged: dict[str, Diagnosis]) -> None:
    """Under clipping the step's norm sits at the bound (0.1 → 0.1 → ...), which shows
    nothing: the evidence gives the norm the backward passes made too, and says which is
    which."""
    (finding,) = judged["never_cleared_clipped.py"].findings
    rows = {str(label): value.rstrip(" …").split(" → ") for label, value in finding.evidence}
    assert set(rows["gradient norm the step used, after clipping"]) == {"0.1"}
    before = [float(v) for v in rows["gradient norm after backward(), before clipping"]]
    assert min(before) > 0.5


def test_accumulation_under_a_grad_scaler_is_judged_not_left_unclear(
        judged: dict[str, Diagnosis]) -> None:
    """The scale hides the loss's divisor in the graph; the step's unscaled gradients give it
    back: the undivided one is a problem saying the loss was not divided, the divided one
    clean, and neither a note."""
    (finding,) = judged["amp_accumulation_undivided.py"].findings
    assert ("sum divided by", "1") in finding.evidence
    assert not judged["amp_accumulation.py"].findings and not judged["amp_accumulation.py"].notes
