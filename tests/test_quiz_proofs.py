"""Quiz keys proven by running code: a choice's `proof` runs after its question's code, and
`gradtutor validate` fails, naming lesson, question and choice, when its truth disagrees with
the answer key; in a question that shows code, every choice needs one. The learner never
sees a proof.

The decisions are pure (jobs_for, problem_text, unproven_choices) and tested on made-up
results; the slow tests run the real CLI over tests/fixtures/proofs and broken copies of it."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from narrowing import step_as
from rich.console import Console

from gradtutor.checking.check import FILE_BUDGET, MEMORY_BUDGET
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import LIMITS, Job, jobs_for, problem_text, snippet
from gradtutor.checking.snippet import run_proof
from gradtutor.lessons.load import load_lesson, unproven_choices
from gradtutor.lessons.model import Choice, Lesson, Quiz
from gradtutor.lessons.timing import step_minutes
from gradtutor.runtime.proofs import run_jobs
from gradtutor.ui.render import Look
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.events import Choose
from gradtutor.walk.machine import begin, handle

if TYPE_CHECKING:
    from conftest import Cli

FIXTURE = Path(__file__).parent / "fixtures" / "proofs" / "keys.yaml"
CLIP = "lesson 'keys', question 'clip-returns', choice"


@pytest.fixture(scope="module")
def keys() -> Lesson:
    return load_lesson(FIXTURE, EXERCISE_RULES)


def proof_jobs(lesson: Lesson) -> dict[str, Job]:
    return {job.what: job for job in jobs_for(lesson, FIXTURE) if job.request["kind"] == "proof"}


def with_question(lesson: Lesson, question_id: str, **changes: object) -> Lesson:
    """`lesson` with one question of its quiz changed."""
    quiz = step_as(lesson, "check", Quiz)
    questions = tuple(dataclasses.replace(q, **changes) if q.id == question_id else q  # type: ignore[arg-type]
                      for q in quiz.questions)
    steps = tuple(dataclasses.replace(quiz, questions=questions) if s is quiz else s
                  for s in lesson.steps)
    return dataclasses.replace(lesson, steps=steps)


# --- the runs validate makes ----------------------------------------------------------------

def test_each_proof_is_one_run_that_expects_what_the_key_says(keys: Lesson) -> None:
    jobs = proof_jobs(keys)
    assert list(jobs) == [f"{CLIP} a: its proof", f"{CLIP} b: its proof", f"{CLIP} c: its proof",
                          "lesson 'keys', question 'second-backward', choice a: its proof",
                          "lesson 'keys', question 'second-backward', choice b: its proof",
                          "lesson 'keys', question 'fresh-grad', choice a: its proof"]
    assert [job.expect for job in jobs.values()] == [
        "holds", "does-not-hold", "holds", "holds", "does-not-hold", "holds"]
    quiz = step_as(keys, "check", Quiz)
    clip = quiz.questions[0]
    c = jobs[f"{CLIP} c: its proof"]
    assert c.request == {"kind": "proof", "code": clip.code,
                         "proof": "biggest = w.grad.abs().max().item()",
                         "holds": "biggest <= 1.0",  # under a learner's check's limits
                         "memory_bytes": MEMORY_BUDGET, "file_bytes": FILE_BUDGET}
    assert c.loc == ("steps", keys.index_of("check"), "questions", 0, "choices", 2, "proof")
    assert c.runs_first == ("steps", keys.index_of("check"), "questions", 0, "code")
    fresh = jobs["lesson 'keys', question 'fresh-grad', choice a: its proof"]
    assert fresh.request["code"] == ""  # a question without code: the proof runs alone
    assert fresh.runs_first is None


def test_a_choice_without_a_proof_is_not_run(keys: Lesson) -> None:
    whats = [job.what for job in jobs_for(keys, FIXTURE)]
    assert not any("'fresh-grad', choice b" in what for what in whats)
    assert whats.count("the code of question 'clip-returns'") == 1


def test_a_proof_that_agrees_with_the_key_proves_it(keys: Lesson) -> None:
    jobs = proof_jobs(keys)
    assert problem_text(jobs[f"{CLIP} a: its proof"], {"holds": True}) is None
    assert problem_text(jobs[f"{CLIP} b: its proof"], {"holds": False}) is None


def test_a_proof_that_disagrees_with_the_key_names_lesson_question_and_choice(
        keys: Lesson) -> None:
    jobs = proof_jobs(keys)
    assert problem_text(jobs[f"{CLIP} b: its proof"], {"holds": True}) == (
        f"{CLIP} b: its proof holds (True) but the answer key marks it wrong; fix the key or "
        f"the choice")
    assert problem_text(jobs[f"{CLIP} c: its proof"], {"holds": False}) == (
        f"{CLIP} c: its proof does not hold (False) but the answer key marks it right; fix the "
        f"key or the choice")


def test_a_proof_that_raises_does_not_run(keys: Lesson) -> None:
    job = proof_jobs(keys)[f"{CLIP} c: its proof"]
    error = "NameError: name 'biggest' is not defined"
    assert problem_text(job, {"error": error, "in": "proof"}) == (
        f"{CLIP} c: its proof does not run: {error}")
    # the question's own code failing is said once, by its own run, not once per choice
    assert problem_text(job, {"error": error, "in": "code"}) is None
    assert problem_text(job, {}) == (
        f"{CLIP} c: its proof ran, but the batch worker sent back no verdict from it")


def test_the_worker_runs_question_code_then_proof_code_then_holds() -> None:
    assert run_proof("x = [1]", "x.append(2)", "x == [1, 2]") == {"holds": True}
    assert run_proof("x = [1]", "", "  len(x) > 1\n") == {"holds": False}
    assert run_proof("x = 1 / 0", "", "True") == {
        "error": "ZeroDivisionError: division by zero", "in": "code"}
    assert run_proof("x = 1", "y = x.missing", "True") == {
        "error": "AttributeError: 'int' object has no attribute 'missing'", "in": "proof"}
    assert run_proof("x = 1", "", "undefined == x") == {
        "error": "NameError: name 'undefined' is not defined", "in": "proof"}


# --- the authoring rule -----------------------------------------------------------------------

def test_a_course_whose_code_questions_all_have_proofs_breaks_no_rule(keys: Lesson) -> None:
    assert list(unproven_choices(keys)) == []  # fresh-grad's choice b: no code, no proof needed


def test_a_code_question_needs_a_proof_on_every_choice(keys: Lesson) -> None:
    quiz = step_as(keys, "check", Quiz)
    clip = quiz.questions[0]
    bare = tuple(dataclasses.replace(c, proof=None) if i == 1 else c
                 for i, c in enumerate(clip.choices))
    found = list(unproven_choices(with_question(keys, "clip-returns", choices=bare)))
    assert found == [(
        "lesson 'keys', question 'clip-returns' shows code, so each choice needs a proof of what "
        "that code does; choice b has none: add `proof:` with `holds:` (and `code:` if it needs "
        "a few lines first)", ("steps", keys.index_of("check"), "questions", 0, "choices", 1))]
    # with code, the question without proofs on its second choice breaks the rule too
    fresh = quiz.questions[2]
    found = list(unproven_choices(with_question(keys, "fresh-grad", code="import torch\n")))
    assert [loc for _, loc in found] == [("steps", keys.index_of("check"), "questions", 2,
                                          "choices", len(fresh.choices) - 1)]


# --- what the learner sees and what the estimate counts ---------------------------------------

def proof_lines(quiz: Quiz) -> list[str]:
    """The lines of the quiz's proofs that could only come from a proof: nowhere in what
    the quiz shows (`y.backward()`, say, is in both a proof and a question's code), and
    longer than a word such as `try:` or `raised`."""
    shown = "\n".join(text for q in quiz.questions
                      for text in [q.prompt, q.code or "", *(c.text for c in q.choices),
                                   *(c.why for c in q.choices)])
    lines = [line.strip() for q in quiz.questions for choice in q.choices
             if choice.proof is not None
             for line in [choice.proof.holds, *(choice.proof.code or "").splitlines()]]
    return [line for line in lines if len(line) > 12 and line not in shown]


def rendered(lesson: Lesson, *events: object) -> str:
    state = begin(lesson, lesson.index_of("check") or 0)
    for event in events:
        state, _ = handle(lesson, state, event)  # type: ignore[arg-type]
    buffer = io.StringIO()
    Console(width=200, file=buffer, force_terminal=False, color_system=None).print(
        screen(lesson, state, 60, False, Look(plain=True)))
    return buffer.getvalue()


def test_the_learner_never_sees_a_proof(keys: Lesson) -> None:
    quiz = step_as(keys, "check", Quiz)
    question = quiz.questions[0]
    asked = rendered(keys)
    answered = rendered(keys, Choose(1), "submit")
    assert question.choices[2].text in asked and question.choices[2].why in answered
    lines = proof_lines(quiz)
    assert len(lines) == 12  # what is left to look for
    assert [line for line in lines if line in asked or line in answered] == []


def test_show_prints_no_proof(cli: Cli, keys: Lesson) -> None:
    code, out, err = cli("show", "keys", "--plain", "--lessons", str(FIXTURE.parent))
    assert code == 0, err
    assert "Each entry was cut to exactly 1 or -1" in out
    lines = proof_lines(step_as(keys, "check", Quiz))
    assert len(lines) == 12  # what is left to look for
    assert [line for line in lines if line in out] == []


def test_proofs_add_nothing_to_the_minutes(keys: Lesson) -> None:
    quiz = step_as(keys, "check", Quiz)
    bare = dataclasses.replace(quiz, questions=tuple(
        dataclasses.replace(q, choices=tuple(Choice(c.text, c.why) for c in q.choices))
        for q in quiz.questions))
    assert bare != quiz and step_minutes(bare) == step_minutes(quiz)


# --- the real CLI -----------------------------------------------------------------------------

def copy_with(tmp_path: Path, old: str, new: str) -> Path:
    """The fixture lesson, with `old` (which must occur once) replaced by `new`, in tmp_path."""
    text = FIXTURE.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "keys.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def line_of(path: Path, text: str) -> int:
    """The 1-based number of the line where `text` (which occurs once) starts."""
    source = path.read_text(encoding="utf-8")
    return source[:source.index(text)].count("\n") + 1


@pytest.mark.slow
def test_validate_proves_every_key_of_the_fixture(cli: Cli) -> None:
    code, out, err = cli("validate", str(FIXTURE.parent))
    assert (code, out) == (0, "[OK] 1 lesson OK (2 steps; 8 proofs passed)\n"), err


@pytest.mark.slow
def test_validate_fails_when_a_proven_key_is_flipped(cli: Cli, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = copy_with(tmp_path, "answer: [a, c]", "answer: [a, b]")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("validate", "keys.yaml")
    assert code == 2
    b = line_of(path, "                entries = w.grad.tolist()") - 1  # its proof's first key
    c = line_of(path, "              code: biggest")
    assert err.splitlines()[-3:-1] == [
        f"keys.yaml:{b}:15: {CLIP} b: its proof does not hold (False) but the answer key "
        f"marks it right; fix the key or the choice",
        f"keys.yaml:{c}:15: {CLIP} c: its proof holds (True) but the answer key marks it "
        f"wrong; fix the key or the choice"], err
    assert err.splitlines()[-1].startswith("gradtutor: 2 problems in lesson files")


@pytest.mark.slow
def test_validate_reports_a_proof_that_raises(cli: Cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    copy_with(tmp_path, "holds: raised\n", "holds: raised and not_defined\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("validate", "keys.yaml")
    assert code == 2
    assert [line.split(": ", 1)[1] for line in err.splitlines() if "keys.yaml:" in line] == [
        "lesson 'keys', question 'second-backward', choice a: its proof does not run: "
        "NameError: name 'not_defined' is not defined"], err


@pytest.mark.slow
@pytest.mark.parametrize("run", [[], ["--no-run"]])
def test_validate_requires_a_proof_on_each_choice_of_a_code_question(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: list[str]) -> None:
    path = copy_with(tmp_path, """\
            proof:
              holds: abs(w.grad.norm().item() - 1.0) < 1e-4
""", "")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("validate", "keys.yaml", *run)
    assert code == 2
    at = line_of(path, "          - text: \"`w.grad`'s L2 norm")
    assert [line for line in err.splitlines() if line.startswith("keys.yaml:")] == [
        f"keys.yaml:{at}:13: lesson 'keys', question 'clip-returns' shows code, so each choice "
        f"needs a proof of what that code does; choice a has none: add `proof:` with `holds:` "
        f"(and `code:` if it needs a few lines first)"], err


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["lessons.md", "authoring.md"])
def test_the_docs_example_proofs_agree_with_their_keys(doc: str) -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / doc).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "proof:" in b]
    assert len(blocks) == 1
    question = yaml.safe_load(textwrap.dedent(blocks[0]))[0]
    keyed = question["answer"] if isinstance(question["answer"], list) else [question["answer"]]
    verdicts = [run_proof(question["code"], c["proof"].get("code") or "", c["proof"]["holds"])
                for c in question["choices"]]
    assert verdicts == [{"holds": letter in keyed} for letter in "abcdefgh"[:len(verdicts)]]


@pytest.mark.slow
def test_when_a_question_s_code_runs_past_its_limit_its_proofs_are_not_run(
        keys: Lesson) -> None:
    """Each proof runs the question's code first: a loop that never ends is named once, by
    the question's own run, not once more (a minute each) by every proof of the question."""
    quiz = ("steps", 1, "questions", 0)
    looping = Job(FIXTURE, quiz + ("code",), "the code of question 'q'", "runs",
                  snippet("while True:\n    pass\n"), step="check", limit=2.0)
    proofs = [Job(FIXTURE, quiz + ("choices", c, "proof"), f"choice {c}", "holds",
                  {"kind": "proof", "code": "while True:\n    pass\n", "proof": "",
                   "holds": "True", **LIMITS}, step="check", limit=2.0,
                  runs_first=quiz + ("code",))
              for c in range(2)]
    other = Job(FIXTURE, ("steps", 1, "questions", 1, "choices", 0, "proof"), "other", "holds",
                {"kind": "proof", "code": "x = 1", "proof": "", "holds": "x == 1", **LIMITS},
                step="check", runs_first=("steps", 1, "questions", 1, "code"))
    assert run_jobs([looping, *proofs, other], environ=dict(os.environ)) == [
        {"timeout": 2.0}, {"skipped": True}, {"skipped": True}, {"holds": True}]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS holds on Linux")
def test_a_proof_runs_under_the_limits_of_a_learner_s_check() -> None:
    """validate proves what a learner's check would run: code that needs more memory than a
    learner's check may add fails its proof, a snippet and a quiz choice's proof alike."""
    big = "block = bytearray(3 * 1024 ** 3)"  # 3 GiB, past a check's 2 GiB
    demo = Job(FIXTURE, ("steps", 1, "code"), "the code of demo 'big'", "runs", snippet(big),
               step="check")
    proof = Job(FIXTURE, ("steps", 1, "questions", 0, "choices", 0, "proof"), "a proof",
                "holds", {"kind": "proof", "code": "", "proof": big, "holds": "True",
                          **LIMITS}, step="check")
    ran, proved = run_jobs([demo, proof], environ=dict(os.environ))
    assert ran == {"error": "MemoryError"}, ran
    assert proved == {"error": "MemoryError", "in": "proof"}, proved
