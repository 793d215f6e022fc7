"""No fix unasked: every text a failed or skipped check can show, in English and in Chinese,
names the mistake and where to look, never the code that fixes it nor a number to paste.

What is walked, from the real sources:

- statically, every `msg()` template of the checkers and of what turns a run into checks
  (`gradtutor/checking/checkers/*.py`, `feedback.py`, `verdict.py`, `outcome.py`), and of the
  exercise screen's notices (`gradtutor/walk/exercise.py`, its stuck pointers), each with its
  zh-CN translation; and every text an exercise's declared checks give (`say`, `help`,
  `subject`, `unjudged`), its mutants' `mistake` (a note on the failing check) and its
  "why it works", from the lessons as loaded in English and in Chinese;
- by running them through the real checker, every message, hint and note of the checks of
  each exercise's starter, each of its declared mutants and the realistic wrong files of the
  checker tests, on seeds where the numbers differ, said in both languages.

Fix code is any call or statement of the exercise's solution, or of the code its last hint
shows, that is not already in its starter (`w.grad.zero_()`, `w.grad = None`,
`torch.isfinite(grad).all()`, `.requires_grad_(False)`), compared with layout, case and
backquotes aside. Code the prompt itself shows (`loss_fn(w)`, `optimizer.step()`) counts only
in a clause that tells the learner to write it ("compute the loss again, with loss_fn(w)");
code the learner's own file holds is theirs to be told about. A pasteable literal is a number,
or a field that a run fills with one, put where the learner would type it: after
"divide/multiply/scale ... by", as a fraction `1/n`, or after "除以/乘以"; a number the
prompt gives or the file holds is not one. The hint ladder is asked for, not shown by a
failure, and is not walked; nor is the confirmed solution.
"""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest
from learner_files import BASIC_EXERCISE_OF, BASIC_MISTAKES, LOOP_MISTAKES, MODEL_FILES
from verdict_texts import (
    CHECKING,
    LANGUAGES,
    PACKAGE,
    SHARED,
    Text,
    exercises,
    static_texts,
)

from gradtutor.checking.checkers import CHECKERS
from gradtutor.checking.mistakes import mutant_source
from gradtutor.i18n import load_catalog

# ---- what the fix is --------------------------------------------------------------------------

def squashed(text: str) -> str:
    """Text or code with layout, backquotes and case aside, for finding code in words (a
    Chinese "返回 X" reads as `return X`)."""
    return re.sub(r"[\s`]+", "", text).lower().replace("返回", "return")


def fragments(source: str) -> set[str]:
    """The calls and simple statements of some code, each as one normalized piece; a method
    called with arguments also without what it is called on (`.requires_grad_(False)`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return,
                             ast.Delete, ast.Call)):
            out.add(ast.unparse(node))
        if isinstance(node, ast.withitem):
            out.add("with " + ast.unparse(node.context_expr))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and (node.args or node.keywords)):
            out.add("." + ast.unparse(node)[len(ast.unparse(node.func.value)) + 1:])
    return out


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


@cache
def fix_code(exercise_id: str) -> frozenset[str]:
    """The exercise's fix, as pieces of code: what its solution and its last hint's code
    have that its starter does not."""
    step = next(s for s in exercises() if s.id == exercise_id)
    found = fragments(step.solution)
    for span in code_spans(step.hints[-1]):
        found |= fragments(span)
    starter = squashed(step.starter)
    return frozenset(squashed(piece) for piece in found - fragments(step.starter)
                     if squashed(piece) not in starter)


@cache
def prompt_of(exercise_id: str) -> str:
    return next(s for s in exercises() if s.id == exercise_id).prompt


@cache
def prompt_shows(exercise_id: str) -> str:
    return squashed(prompt_of(exercise_id))


# A clause that tells the learner what to do: it starts with a verb in the imperative (en),
# or such a verb comes before the code in it (zh).
IMPERATIVE = re.compile(
    r"^(?:\w+ )?(?:call|compute|return|set|use|run|test|check|clip|save|move|divide|multiply|"
    r"wrap|put|add|replace|compare|build|key|update|make|scale|give)\b", re.I)
ZH_IMPERATIVE = re.compile(r"(?:调用|改用|计算|返回|设为|设成|使用|运行|检查|测试|保存|移到|放到|"
                           r"把|用|比较|裁剪|更新|再算)")
CLAUSE = re.compile(r"[.:;](?:\s+|$)|[。：；，（]|\bthen\b|\band\b")


def instructions(text: str) -> list[str]:
    """The clauses of a text that tell the learner what to do, squashed."""
    out = []
    for clause in CLAUSE.split(text):
        clause = clause.strip()
        if IMPERATIVE.match(clause):
            out.append(squashed(clause))
        elif (verb := ZH_IMPERATIVE.search(clause)) is not None:
            out.append(squashed(clause[verb.start():]))
    return out


# A number (or a field a run fills with one) where the learner would type it.
NUMBER = r"(?:\{[^}]*\}|\d+(?:\.\d+)?)"
PASTEABLE = (
    re.compile(rf"\b(?:divide|multiply|scale)\b[^.:;]*?\bby\s+({NUMBER})", re.I),
    re.compile(rf"(?<![\w.])1\s*/\s*({NUMBER})"),
    re.compile(rf"(?:除以|乘以|缩放)\s*({NUMBER})"),
)


def numbers(source: str) -> set[str]:
    """The numbers some code or text holds, as written."""
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?", source))


def pasteable(text: str, known: set[str]) -> list[str]:
    """The literals of `text` a learner could paste, but those in `known` (numbers the
    prompt already gives, or the learner's own file holds)."""
    return [found[0] for pattern in PASTEABLE for found in pattern.finditer(text)
            if found[1] not in known]


def problems(text: Text, wrote: str = "") -> list[str]:
    """What in `text` hands over the fix of the exercises that can show it: code the
    learner was not shown (any code of the fix the prompt shows only when the text tells
    them to write it), or a literal to paste. Code the learner's file `wrote` is theirs."""
    said, told = squashed(text.text), instructions(text.text)
    theirs = {squashed(piece) for piece in fragments(wrote)}
    mine = squashed(wrote)  # a traceback quotes the learner's own lines
    out = [f"shows fix code `{piece}` of {exercise_id}"
           for exercise_id in text.exercises for piece in sorted(fix_code(exercise_id))
           if piece not in theirs and piece not in mine and (
               any(piece in clause for clause in told) if piece in prompt_shows(exercise_id)
               else piece in said)]
    known = numbers(wrote).union(*(numbers(prompt_of(e)) for e in text.exercises))
    out += [f"gives a literal to paste: {found!r}" for found in pasteable(text.text, known)]
    return sorted(set(out))



# "Why it works" shows only after a pass: it may name the reference's calls, but as examples
# ("for instance", "e.g.", 例如), never as if the learner's file held them (test_pass_words).
_EXAMPLE = re.compile(r"for instance|e\.g\.|例如|比如")
_SENTENCE = re.compile(r"(?<!e\.g\.)(?<=[.;:!?])\s+|(?<=[。；：！？])")


def without_examples(text: str) -> str:
    """`text` with what each sentence gives as an example cut off."""
    kept = []
    for sentence in _SENTENCE.split(text):
        marker = _EXAMPLE.search(sentence)
        kept.append(sentence[: marker.start()] if marker else sentence)
    return " ".join(kept)

def test_the_walk_reaches_every_kind_of_text() -> None:
    texts = static_texts()
    wheres = {text.where.split(":")[0] for text in texts}
    assert {str(path.relative_to(PACKAGE.parent)) for path in SHARED} <= wheres
    assert all(str(path.relative_to(PACKAGE.parent)) in wheres
               for name in CHECKERS for path in [CHECKING / "checkers" /
                                                 f"{CHECKERS[name]}.py"])
    for lang in LANGUAGES:
        ours = [text for text in texts if text.lang == lang]
        assert sum(text.where.endswith("/why") for text in ours) == len(exercises())
        assert sum("/mutant " in text.where for text in ours) == sum(
            len(step.mutants) for step in exercises())
    print(f"texts walked: en {sum(t.lang == 'en' for t in texts)}, "
          f"zh-CN {sum(t.lang == 'zh-CN' for t in texts)}")


def test_the_fix_code_of_the_course_is_found() -> None:
    assert "w.grad=none" in fix_code("manual-sgd")
    assert "torch.isfinite(grad).all()" in fix_code("grad-health")
    assert ".requires_grad_(false)" in fix_code("freeze-layer")
    assert "model.train()" in fix_code("evaluate-without-grad")
    assert "loss_fn(w)" in fix_code("two-backwards")
    assert "returnw.grad" in fix_code("read-grad")
    assert "loss.backward()" not in fix_code("fix-the-loop")  # the starter has it


def test_the_checks_find_what_they_are_for() -> None:
    """Each rule fails on the kind of text it is for, and passes on its reworded form."""
    def said(text: str, exercise_id: str) -> list[str]:
        return problems(Text("x", (exercise_id,), "en", text))

    assert said("Check torch.isfinite(grad).all() as well.", "grad-health")
    assert said("Return w.grad after the backward call.", "read-grad")
    assert said("or call model[0].requires_grad_(False).", "freeze-layer")
    assert said("divide each micro-batch's loss by {batch-count}", "accumulate-micro-batches")
    assert said("divide each micro-batch's loss by 2", "accumulate-micro-batches")
    assert said("each mean loss should count 1/4", "accumulate-micro-batches")
    assert said("每个小批次的损失除以 2", "accumulate-micro-batches")
    assert not said("a nan norm is never greater than max_norm: look at how you test for "
                    "nan and inf.", "grad-health")
    assert not said("divide each micro-batch's loss by the number of micro-batches",
                    "accumulate-micro-batches")


STATIC = static_texts()



@pytest.mark.parametrize("text", STATIC, ids=[f"{t.lang}:{t.where}" for t in STATIC])
def test_no_static_text_hands_over_the_fix(text: Text) -> None:
    if text.where.endswith("/why"):
        text = Text(text.where, text.exercises, text.lang, without_examples(text.text),
                    text.wrote)
    assert problems(text, text.wrote) == [], text.text


# ---- the texts of real runs -----------------------------------------------------------------

# Files a newcomer wrote for the exercises (the review of 2026-12-04, F4, F9), those that
# neither the lessons' mutants nor the checker tests' realistic mistakes already hold.
NEWCOMER: dict[str, tuple[str, str]] = {
    "grad-health/returns-items": ("grad-health", """
        def grad_report(model, max_norm):
            report = {name: "ok" for name, _ in model.named_parameters()}
            return report.items
    """),
    "evaluate-without-grad/no-train": ("evaluate-without-grad", """
        import torch


        def evaluate(model, loss_fn, batches):
            model.eval()
            total = 0.0
            with torch.no_grad():
                for x, y in batches:
                    total += loss_fn(model(x), y).item()
            return total / len(batches)
    """),
    "accumulate-micro-batches/one-backward": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            loss = sum(loss_fn(model(x), y) for x, y in micro_batches)
            loss.backward()
            optimizer.step()
    """),
    "clip-and-step/per-parameter": ("clip-and-step", """
        from torch import nn


        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            norms = [nn.utils.clip_grad_norm_([p], max_norm) for p in model.parameters()]
            optimizer.step()
            return sum(n ** 2 for n in norms) ** 0.5
    """),
    "log-losses/item-not-called": ("log-losses", """
        def total_loss(w):
            total = 0.0
            for target in (1.0, 2.0, 3.0):
                total = total + ((w - target) ** 2).mean()
            return total.item
    """),
}
RUN_SEEDS = (0, 1)  # two seeds: a number a run fills in (micro-batches, steps) differs


def learner_files() -> list[tuple[str, str, str]]:
    """(label, exercise, source) of every file run: each exercise's starter and mutants, the
    realistic mistakes of the checker tests and the newcomer's files."""
    from textwrap import dedent

    files = []
    for step in exercises():
        files.append((f"starter:{step.id}", step.id, step.starter))
        files += [(f"mutant:{step.id}/{mutant.id}", step.id, mutant_source(step, index))
                  for index, mutant in enumerate(step.mutants)]
    files += [(f"mistake:{label}", BASIC_EXERCISE_OF[checker], dedent(source))
              for label, (checker, source, _, _) in BASIC_MISTAKES.items()]
    files += [(f"mistake:{label}", exercise_id, dedent(source))
              for label, (exercise_id, source, _, _) in LOOP_MISTAKES.items()]
    files += [(f"model-facts:{label}", exercise_id, dedent(source))
              for label, (exercise_id, source) in MODEL_FILES.items()
              if source != "SOLUTION"]
    files += [(f"newcomer:{label}", exercise_id, dedent(source))
              for label, (exercise_id, source) in NEWCOMER.items()]
    return files


@pytest.fixture(scope="module")
def run_texts(tmp_path_factory: pytest.TempPathFactory) -> list[Text]:
    """Every message, hint and note of every check that failed, errored or was skipped (and
    every note) in the runs of the learner files, as the tutor decides them after a real
    check, said in English and in Chinese."""
    import checker_batch

    from gradtutor.checking.checkers import judge_of, request_checker
    from gradtutor.checking.mistakes import name_known_mistake
    from gradtutor.i18n import ENGLISH, Translator

    steps = {step.id: step for step in exercises()}
    files = learner_files()
    jobs = [{"checker": request_checker(steps[exercise_id]),
             "function": steps[exercise_id].function, "source": source, "seed": seed}
            for _, exercise_id, source in files for seed in RUN_SEEDS]
    answers = checker_batch.run_in_batch(jobs, tmp_path_factory.mktemp("no-fix-runs"))
    zh = Translator("zh-CN", {**load_catalog("zh-CN"), **checker_batch.lesson_catalog("zh-CN")})
    texts = []
    for number, messages in enumerate(answers):
        label, exercise_id, source = files[number // len(RUN_SEEDS)]
        step = steps[exercise_id]
        checks = name_known_mistake(step, source, tuple(checker_batch.checks_from(
            judge_of(step), step.function, messages)))
        for check in checks:
            parts = (("note", check.note),) + ((("message", check.message),
                                                ("help", check.help))
                                               if check.status != "pass" else ())
            for part, said in parts:
                texts += [Text(f"{label} seed {RUN_SEEDS[number % len(RUN_SEEDS)]}: "
                               f"{check.name}={check.status} {part}", (exercise_id,), lang,
                               tr(said), source)
                          for lang, tr in (("en", ENGLISH), ("zh-CN", zh)) if said]
    return texts


@pytest.mark.slow
def test_no_text_of_a_real_run_hands_over_the_fix(run_texts: list[Text]) -> None:
    found = [f"{text.lang} {text.where}: {problem}\n    {text.text}"
             for text in run_texts for problem in problems(text, text.wrote)]
    assert found == []
    shown = {(text.exercises[0], text.where.split(":")[0]) for text in run_texts}
    for step in exercises():  # every exercise's starter and mutants were said something of
        assert (step.id, "mutant") in shown and (step.id, "starter") in shown, step.id
    print(f"texts of real runs walked: en {sum(t.lang == 'en' for t in run_texts)}, "
          f"zh-CN {sum(t.lang == 'zh-CN' for t in run_texts)} "
          f"({len({(t.lang, t.text) for t in run_texts})} distinct)")


@pytest.mark.slow
def test_the_newcomers_files_get_the_reworded_words(run_texts: list[Text]) -> None:
    """The review's cases fail, each with words that name the mistake and where to look."""
    def said(label: str) -> str:
        found = [text.text for text in run_texts
                 if text.lang == "en" and text.where.startswith(f"{label} ")]
        assert found, label
        return " ".join(found)

    assert "Look at what your function returns after the backward call" in said(
        "mistake:read-grad/returns-backward-of-the-call")
    assert "look at where your second pass gets its loss from" in said(
        "mistake:two-backwards/same-loss-twice")
    assert "Look at how your function tests for nan and inf" in said(
        "mistake:health/norm-only-message")
    assert "`report.items` itself" in said("newcomer:grad-health/returns-items")
    assert "look at what your function set it on" in said("model-facts:setup:module-flag")
    assert "Look at the mode your function leaves the model in" in said(
        "newcomer:evaluate-without-grad/no-train")
    assert "needs a backward pass of its own" in said(
        "newcomer:accumulate-micro-batches/one-backward")
    assert "how much each micro-batch's loss counts in the step" in said(
        "mistake:accumulate/not-divided-message")
    per_parameter = said("newcomer:clip-and-step/per-parameter")
    assert "look at how many times your function clips" in per_parameter
    assert "clear first" not in per_parameter  # the generic hint that did not fit
    assert "`total.item` itself" in said("newcomer:log-losses/item-not-called")
