"""What a learner reads after a pass speaks of their own code: for every exercise, every correct
style this suite knows (the solution, the correct files of the checker tests, and the styles
below) runs as a real check (tests/checker_batch.py), and no call, torch name or statement that
the pass text shows (the passed checks' lines and notes, and the exercise's "Why it works", in
English and in Chinese) is missing from the file that passed, unless the text gives it as an
example ("for instance", "e.g.", 例如)."""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from textwrap import dedent

import pytest
from checker_batch import checks_from, lesson_catalog, run_in_batch, untranslated
from learner_files import BACKWARD_FILES, BASIC_EXERCISE_OF, BASIC_STYLES, LOOP_STYLES

from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check, say
from gradtutor.i18n import ENGLISH, Translator, load_catalog
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

SEED = 3

# Correct styles not in the other checker tests: each answers its exercise another way than
# the solution does (the newcomer review's F7 and F8 among them).
MORE_STYLES: dict[str, dict[str, str]] = {
    "make-weights": {
        "attribute": """
            import torch

            def make_weights(values):
                w = torch.tensor(values, dtype=torch.float32) * 0.1
                w.requires_grad = True
                return w
            """,
        "as-tensor-float": """
            import torch

            def make_weights(values):
                w = torch.as_tensor(values).float().mul(0.1)
                w.requires_grad = True
                return w
            """,
    },
    "no-grad-predict": {
        "inference-mode": """
            import torch

            def predict(w):
                with torch.inference_mode():
                    return 3 * w + 1
            """,
        "decorator": """
            import torch

            @torch.no_grad()
            def predict(w):
                return 3 * w + 1
            """,
        "set-grad-enabled-block": """
            import torch

            def predict(w):
                with torch.set_grad_enabled(False):
                    y = w * 3 + 1
                return y
            """,
    },
    "log-losses": {
        "float": """
            def total_loss(w):
                total = 0.0
                for target in (1.0, 2.0, 3.0):
                    total += float(((w - target) ** 2).mean())
                return total
            """,
        "sum-of-tolist": """
            def total_loss(w):
                return sum(((w - t) ** 2).mean().tolist() for t in (1.0, 2.0, 3.0))
            """,
    },
    "snapshot": {
        "clone-then-detach": """
            def snapshot(w):
                return w.clone().detach()
            """,
    },
    "stack-losses": {
        "cat-of-reshaped": """
            import torch

            def loss_vector(w):
                a = w.sum()
                b = (w ** 2).sum()
                return torch.cat([a.reshape(1), b.reshape(1)])
            """,
    },
    "chain-by-hand": {
        "one-line": """
            def grad_by_hand(w, x, y):
                return 2 * (w * x - y) * x
            """,
    },
    "keep-intermediate": {
        "hook": """
            def grad_of_prediction(w, x, y):
                kept = []
                pred = w * x
                pred.register_hook(lambda g: kept.append(g))
                loss = ((pred - y) ** 2).sum()
                loss.backward()
                return kept[0]
            """,
    },
    "grad-without-backward": {
        "index": """
            import torch

            def grad_as_value(w, loss_fn):
                return torch.autograd.grad(loss_fn(w), [w])[0]
            """,
    },
    "manual-sgd": {
        "zero-before": """
            import torch

            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    if w.grad is not None:
                        w.grad.zero_()
                    loss_fn(w, batch).backward()
                    with torch.no_grad():
                        w.sub_(lr * w.grad)
            """,
    },
    "evaluate-without-grad": {
        "inference-mode-float": """
            import torch

            def evaluate(model, loss_fn, batches):
                model.eval()
                losses = []
                with torch.inference_mode():
                    for x, y in batches:
                        losses.append(float(loss_fn(model(x), y)))
                model.train()
                return sum(losses) / len(losses)
            """,
    },
    "freeze-layer": {
        "requires-grad-method": """
            def freeze_first_layer(model):
                model[0].requires_grad_(False)
            """,
    },
    "save-checkpoint": {
        "dict-call": """
            import torch

            def save_checkpoint(model, optimizer, f):
                torch.save(dict(model=model.state_dict(), optimizer=optimizer.state_dict()), f)
            """,
    },
    "clip-and-step": {
        "model-zero-grad": """
            import torch

            def train_step(model, optimizer, loss_fn, x, y, max_norm):
                model.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                optimizer.step()
                return norm
            """,
    },
}


# Answers that were told of code they do not hold (issue 23): label -> (exercise, learner
# file, the check that fails, words its message says, words it must not say).
TOLD: dict[str, tuple[str, str, str, str, str]] = {
    # a graph was built and then cut off: not "nothing was recorded", nor credited to no_grad
    "detached-prediction": ("no-grad-predict", """
        def predict(w):
            return (3 * w + 1).detach()
        """, "no-record", r"PyTorch recorded a graph \(MulBackward0, AddBackward0\)",
        r"no_grad|nothing was recorded"),
    # stacked, then detached: not blamed on torch.tensor, which the file never calls
    "stacked-then-detached": ("stack-losses", """
        import torch

        def loss_vector(w):
            return torch.stack([w.sum(), (w ** 2).sum()]).detach()
        """, "reaches-w", r"^Your tensor came out of \.detach\(\)", r"torch\.tensor|item"),
    "stacked-detached-losses": ("stack-losses", """
        import torch

        def loss_vector(w):
            a = w.sum().detach()
            b = (w ** 2).sum().detach()
            return torch.stack([a, b])
        """, "reaches-w", r"^Your tensor is a new leaf with no history: it holds the numbers",
        r"torch\.tensor|item"),
    # pred's gradient by torch.autograd.grad: w.grad stays None, and no pred was detached
    "pred-gradient-as-a-value": ("keep-intermediate", """
        import torch

        def grad_of_prediction(w, x, y):
            pred = w * x
            loss = ((pred - y) ** 2).sum()
            (grad,) = torch.autograd.grad(loss, pred)
            return grad
        """, "reaches-w", r"torch\.autograd\.grad hands its gradients back as values",
        r"detach|requires_grad_"),
}


@functools.cache
def exercises() -> dict[str, Exercise]:
    course = load_course(rules=EXERCISE_RULES)
    return {step.id: step for lesson in course.lessons for step in lesson.steps
            if isinstance(step, Exercise)}


def all_files() -> dict[str, tuple[str, str]]:
    """label -> (exercise, learner file): every correct style, and the answers of `TOLD`."""
    return {**styles(), **{f"told:{label}": (eid, dedent(source))
                           for label, (eid, source, _, _, _) in TOLD.items()}}


def styles() -> dict[str, tuple[str, str]]:
    """label -> (exercise, a correct learner file): every correct file this suite knows."""
    out = {f"{eid}/solution": (eid, step.solution) for eid, step in exercises().items()}
    for table, exercise_of in ((BASIC_STYLES, BASIC_EXERCISE_OF.__getitem__),
                               (LOOP_STYLES, str), (MORE_STYLES, str)):
        for key, files in table.items():
            out.update({f"{exercise_of(key)}/{name}": (exercise_of(key), dedent(source))
                        for name, source in files.items()})
    out.update({f"{eid}/{label}": (eid, dedent(source)) for label, (eid, source, failing, _)
                in BACKWARD_FILES.items() if failing is None})
    return out


# ---- the rule -------------------------------------------------------------------------------

# a name called: `x.item()`, `requires_grad_()`, `torch.no_grad()` (not `d(loss)`, math)
_CALL = re.compile(r"(?<![\w.])(\.?[A-Za-z_]\w+(?:\.[A-Za-z_]\w*)*)\(")
# a function or value of torch's, called or not: `torch.stack`, `nn.utils.clip_grad_norm_`
_TORCH = re.compile(r"(?<![\w.])((?:torch|nn)\.[A-Za-z_][\w.]*\w)")
# a statement: `w.grad = None`, `w -= lr * w.grad` (not `==`, nor a keyword `dtype=...`)
_STATEMENT = re.compile(r"^[\w.\[\]'\"]+ (?:[-+*/]?=) (?!=)")
_EXAMPLE = re.compile(r"for instance|e\.g\.|例如|比如")
_SENTENCE = re.compile(r"(?<!e\.g\.)(?<=[.;:!?])\s+|(?<=[。；：！？])")


def words_of(source: str) -> set[str]:
    return set(re.findall(r"\w+", source))


def named_code(text: str) -> list[str]:
    """The calls, torch names and statements a text names as code, outside what it gives as
    an example: in a sentence, whatever follows "for instance", "e.g." or 例如."""
    found: list[str] = []
    for sentence in _SENTENCE.split(text):
        marker = _EXAMPLE.search(sentence)
        said = sentence[: marker.start()] if marker else sentence
        found += [m[1] for m in _CALL.finditer(said)] + [m[1] for m in _TORCH.finditer(said)]
        found += [span for span in re.findall(r"`([^`]+)`", said) if _STATEMENT.match(span)]
    return found


def absent(text: str, source: str) -> list[str]:
    """What `text` names as code that the learner's `source` does not hold: a statement not
    found in it (spaces aside), a call or torch name with a part not found in it as a word."""
    words, flat = words_of(source), re.sub(r"\s+", "", source)
    out = []
    for code in named_code(text):
        if _STATEMENT.match(code):
            if re.sub(r"\s+", "", code) not in flat:
                out.append(code)
        elif not all(part in words for part in code.strip(".").split(".")):
            out.append(code)
    return out


def test_the_rule_finds_code_named_as_if_it_were_there_and_spares_examples() -> None:
    text = ("`.requires_grad_()` switches tracking on; `w.grad = None` clears it; "
            "`torch.stack` joins them. The gradient d(loss)/d(w) is stored. Recording can be "
            "switched off, for instance with `torch.no_grad()`.")
    assert named_code(text) == [".requires_grad_", "w.grad = None", "torch.stack"]
    assert absent(text, "w.requires_grad = True\nw.grad.zero_()\ntorch.stack([a])\n") == [
        ".requires_grad_", "w.grad = None"]
    assert absent(text, "w.requires_grad_()\nw.grad = None\nx = torch.stack(y)") == []
    assert absent("`w -= lr * w.grad` in place", "w -= lr*w.grad") == []
    assert named_code("e.g. `torch.no_grad()`; 例如 `torch.no_grad()`") == []


# ---- every correct style, run as a real check -----------------------------------------------

@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Check]]:
    """label -> the checks of the file's run."""
    labelled = all_files()
    jobs = [{"checker": request_checker(exercises()[eid]), "function": exercises()[eid].function,
             "source": source, "seed": SEED} for eid, source in labelled.values()]
    results = run_in_batch(jobs, tmp_path_factory.mktemp("pass-words"))
    return {label: checks_from(judge_of(exercises()[eid]), exercises()[eid].function, messages)
            for (label, (eid, _)), messages in zip(labelled.items(), results, strict=True)}


@functools.cache
def chinese() -> tuple[Translator, dict[str, Exercise]]:
    course = load_course(lang="zh-CN", rules=EXERCISE_RULES)
    return (Translator("zh-CN", {**load_catalog("zh-CN"), **lesson_catalog("zh-CN")}),
            {step.id: step for lesson in course.lessons for step in lesson.steps
             if isinstance(step, Exercise)})


def pass_text(checks: list[Check], why: str, tr: Translator) -> str:
    """All a pass shows in words: each check's line and note, and "Why it works"."""
    lines = [say(tr, text) for check in checks for text in (check.message, check.note) if text]
    return "\n".join([*lines, why])


@pytest.mark.slow
@pytest.mark.parametrize("label", list(styles()))
def test_a_pass_names_no_code_the_file_does_not_hold(judged: dict[str, list[Check]],
                                                     label: str) -> None:
    eid, source = styles()[label]
    checks = judged[label]
    said = "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)
    assert checks and all(c.status == "pass" for c in checks), said  # a correct style passes
    tr, translated = chinese()
    for language, words in (("en", pass_text(checks, exercises()[eid].why, ENGLISH)),
                            ("zh", pass_text(checks, translated[eid].why, tr))):
        assert absent(words, source) == [], (language, words)


def test_every_exercise_has_a_correct_style_besides_its_solution() -> None:
    covered = {eid for label, (eid, _) in styles().items() if not label.endswith("/solution")}
    assert covered == set(exercises())


@pytest.mark.slow
@pytest.mark.parametrize("label", list(TOLD))
def test_an_answer_is_told_what_its_own_run_did(judged: dict[str, list[Check]],
                                                label: str) -> None:
    eid, _, name, says, never = TOLD[label]
    checks = judged[f"told:{label}"]
    said = "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)
    failed = next((c for c in checks if c.status == "fail"), None)
    assert failed is not None and failed.name == name, said
    assert re.search(says, failed.message), said
    tr, _ = chinese()
    # its words are said in Chinese too (the evidence's columns are code: w, x, y)
    assert untranslated([replace(failed, evidence=None)], dict(tr.catalog)) == []
    for text in (failed.message, failed.help):
        assert not re.search(never, text), said
        assert not re.search(never, say(tr, text)), say(tr, text)
