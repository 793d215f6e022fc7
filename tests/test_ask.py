"""`gradtutor ask`: the course's answer to a learner's own question, as the learner gets it
from the command line and in the walkthrough: the steps that teach it, PyTorch's messages
matched whatever their numbers, "not in this course" for what it does not teach, never an
exercise's solution, and the JSON a script reads."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from conftest import Cli

from gradtutor.asking.answer import NOWHERE, Answer, Moment, answer
from gradtutor.asking.index import Index, load
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.model import Exercise

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


@cache
def course() -> tuple[Index, tuple[Exercise, ...]]:
    return load(None, EXERCISE_RULES)


def ask(question: str, moment: Moment = NOWHERE, lang: str = "en") -> Answer:
    index, exercises = course()
    return answer(index, question, moment, lang, exercises)


def cited(found: Answer) -> list[str]:
    return [f"{c.doc.lesson}/{c.doc.step}" for c in found.steps]


def said(found: Answer) -> str:
    return " ".join([found.sentences, *(c.passage for c in found.steps),
                     *(c.snippet or "" for c in found.steps)])


def test_a_question_in_the_courses_words_finds_the_step_that_teaches_it() -> None:
    found = ask("why is my grad None?")
    assert found.covered
    assert {"grad/start-as-none", "grad/none-before-backward", "grad/none-grad-clue"} & set(
        cited(found))
    assert "None" in found.sentences


def test_a_question_in_chinese_is_answered_from_the_chinese_course() -> None:
    found = ask("为什么梯度会累加？", lang="zh-CN")
    assert cited(found)[0] == "grad/grad-accumulates"
    assert re.search(r"[\u4e00-\u9fff]", found.sentences)


def variants(message: str) -> list[str]:
    """A declared message as learners paste it: other numbers and names, inside a
    sentence, inside a Chinese question, only its first line."""
    renamed = re.sub(r"\d+", "7", re.sub(r"'[^']*'", "'weight'", message))
    first = message.split(". ")[0]
    return [message, renamed, f"I get this: {renamed} what does it mean",
            f"运行时报错 {renamed} 怎么办？", first]


def test_every_declared_message_finds_its_own_step_first_however_it_is_pasted() -> None:
    index, _ = course()
    for doc, messages in zip(index.docs, index.errors, strict=True):
        for message in messages:
            for pasted in variants(message):
                found = ask(pasted)
                assert found.covered and cited(found)[0] == f"{doc.lesson}/{doc.step}", (
                    pasted, cited(found))


@pytest.mark.parametrize(("question", "topic"), [
    ("how do I train on two GPUs with DDP?", "distributed"),
    ("CUDA out of memory when batch size is 64", "GPU memory"),
    ("怎么用混合精度训练？", "mixed precision"),
    ("how to export my model to ONNX", "ONNX"),
    ("my model overfits badly: training loss goes to almost zero but the validation loss "
     "keeps going up after epoch 5, should I add weight decay to the optimizer?", "overfitting"),
    ("I set torch.manual_seed(0) but my loss is still different on every run of the same "
     "training script, how do I make backward deterministic?", "reproducibility"),
])
def test_an_outside_topic_is_not_in_this_course_and_points_nowhere(question: str,
                                                                    topic: str) -> None:
    found = ask(question)
    assert not found.covered and found.steps == ()
    assert found.topic is not None and topic in found.topic
    assert found.lead is not None and "not in this course" in found.lead


def test_a_long_question_whose_point_sits_in_one_clause_is_answered() -> None:
    """Most of a forum post's words (the learner's setting, thanks, numbers) are words the
    course never uses; the clause that matters is enough to answer it."""
    found = ask("hi everyone, first post here. I'm fitting a small regression on my laptop for a "
                "class project and I print model.fc.weight.grad after loss.backward() on every "
                "batch; the numbers keep getting bigger from batch to batch. my loop never "
                "calls zero_grad, is that related?")
    assert found.covered
    assert {"grad/hidden-bug", "grad/hidden-bug-demo", "grad/grad-accumulates",
            "grad/zero-grad"} & set(cited(found))


def test_gibberish_is_not_in_this_course() -> None:
    assert not ask("qwzx plorb frambulate").covered


def benchmark_questions() -> list[str]:
    out = []
    for name in ("ask_questions.yaml", "ask_heldout.yaml"):
        data = yaml.safe_load((BENCHMARKS / name).read_text(encoding="utf-8"))
        out += [entry["q"] for entry in data["questions"]]
    return out


def solution_lines(exercise: Exercise) -> list[str]:
    """The solution's lines a learner would paste, squashed, but those of the starter."""
    def squash(line: str) -> str:
        return re.sub(r"\s+", "", line.split("#")[0])
    starter = {squash(line) for line in exercise.starter.splitlines()}
    return [squash(line) for line in exercise.solution.splitlines()
            if squash(line) and squash(line) not in starter and len(squash(line)) > 6]


def test_no_answer_to_any_benchmark_question_carries_a_solution() -> None:
    """Asked anywhere, no answer holds an exercise's solution (all its lines beyond the
    starter); asked on an exercise's own screen, not one line of it."""
    _, exercises = course()
    questions = benchmark_questions() + [
        f"give me the code for {e.function}" for e in exercises] + [
        f"what is the solution of {e.id}" for e in exercises]
    for question in questions:
        text = re.sub(r"\s+", "", said(ask(question)))
        for exercise in exercises:
            lines = solution_lines(exercise)
            assert len(lines) < 2 or not all(line in text for line in lines), (
                question, exercise.id)
    for exercise in exercises:
        lines = solution_lines(exercise)
        for question in [*questions[:40], f"how do I solve {exercise.id}?"]:
            text = re.sub(r"\s+", "", said(ask(question, Moment(exercise=exercise))))
            assert not [line for line in lines if line in text], (question, exercise.id)


def test_why_does_this_fail_on_an_exercise_answers_about_its_failing_check() -> None:
    _, exercises = course()
    exercise = next(e for e in exercises if e.id == "two-backwards")
    moment = Moment("grad", exercise.id, exercise, "def f(): ...",
                    (("clears", "w.grad still held the first call's gradient when the "
                                "second backward added into it"),))
    found = ask("why does this fail?", moment)
    assert found.covered and found.lead is not None and "clears" in found.lead
    assert "grad/grad-accumulates" in cited(found)


def test_ask_prints_the_answer_and_how_to_go_there(cli: Cli) -> None:
    code, out, err = cli("ask", "why does backward add into .grad?")
    assert code == 0, err
    assert "gradtutor show grad --step grad-accumulates" in " ".join(out.split())


def test_ask_json_gives_the_documented_fields(cli: Cli) -> None:
    code, out, _ = cli("ask", "--json", "RuntimeError: Trying to backward through the graph "
                                        "a second time")
    data = json.loads(out)
    assert code == 0
    assert {"question", "covered", "steps", "text", "source"} <= set(data)
    assert data["source"] == "course" and data["covered"] is True
    assert data["steps"][0]["lesson"] == "backward"
    assert set(data["steps"][0]) >= {"lesson", "step", "title", "passage"}


def test_ask_json_off_course(cli: Cli) -> None:
    code, out, _ = cli("ask", "--json", "how do I use torch.compile")
    data = json.loads(out)
    assert code == 0 and data["covered"] is False and data["steps"] == []
    assert "not in this course" in data["text"]


def test_ask_in_chinese_speaks_chinese(cli: Cli) -> None:
    code, out, _ = cli("--lang", "zh", "ask", "怎么清空梯度？")
    assert code == 0
    assert "你的问题" in out and "课程中讲解它的地方" in out


def test_an_empty_question_is_one_line_with_a_hint(cli: Cli) -> None:
    code, out, err = cli("ask", "  ")
    assert code == 2
    assert err.strip().count("\n") == 0 and "hint" in err and "Traceback" not in err


def test_a_file_without_an_exercise_is_refused_with_a_hint(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("pass\n")
    code, _, err = cli("ask", "--file", str(tmp_path / "x.py"), "why?")
    assert code == 2 and "--exercise" in err
