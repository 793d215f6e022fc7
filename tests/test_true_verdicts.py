"""Each verdict is true of the learner's own code: where an exercise asks autograd for a
value, a value the learner computed by hand fails, said so (keep-intermediate,
backward-a-vector), and so does one from a backward pass whose trace was wiped
(grad-without-backward); a clip before backward() is told that it
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
from textwrap import dedent

import pytest
from checker_suite import checks_of_files, course_exercise

from gradtutor.checking.verdict import Check
from gradtutor.i18n import load_catalog, translator

SEEDS = (0, 7, 82444923)

# label -> (exercise, source or "STARTER", {check: (status, words its message matches)}, words
# no message of the verdict may hold: the sentences of another mistake). With no checks
# named, every check passes.
FILES: dict[str, tuple[str, str, dict[str, tuple[str, str]], str]] = {
    # keep-intermediate: the right values computed by hand, after a backward pass that kept
    # nothing of pred
    "keep:by-hand": ("keep-intermediate", """
        def grad_of_prediction(w, x, y):
            pred = w * x
            loss = ((pred - y) ** 2).sum()
            loss.backward()
            return 2 * (pred - y)
        """, {"returns-pred-grad": ("fail", r"^The tensor you returned was made by your own "
                                    r"`\*`, not by backward\(\): its values are "
                                    r"d\(loss\)/d\(pred\), computed by hand")}, r"^$"),
    "keep:by-hand-detached": ("keep-intermediate", """
        def grad_of_prediction(w, x, y):
            pred = w * x
            loss = ((pred - y) ** 2).sum()
            loss.backward()
            return (2 * pred - 2 * y).detach().clone()
        """, {"returns-pred-grad": ("fail", r"made by your own `-`, not by backward\(\)")},
        r"^$"),
    # pred's kept gradient, copied: autograd made those numbers
    "keep:a-copy-of-pred-grad": ("keep-intermediate", """
        import copy

        def grad_of_prediction(w, x, y):
            pred = w * x
            pred.retain_grad()
            loss = ((pred - y) ** 2).sum()
            loss.backward()
            return copy.deepcopy(pred.grad.detach().clone().to(pred.dtype))
        """, {}, r"by hand"),
    "vector:by-hand": ("backward-a-vector", """
        import torch

        def grad_of_errors(w, x, y):
            errors = (w * x - y) ** 2
            errors.backward(gradient=torch.ones_like(errors))
            return 2 * (w * x - y) * x
        """, {"returns-gradient": ("fail", r"made by your own `\*`, not by backward\(\)")},
        r"^$"),
    # the gradient from backward(), with w.grad set back to None so that it looks untouched
    "value:backward-then-cleared": ("grad-without-backward", """
        def grad_as_value(w, loss_fn):
            loss_fn(w).backward()
            grad = w.grad
            w.grad = None
            return grad
        """, {"grad-untouched": ("fail", r"^backward ran once and stored the gradient in "
                                 r"w\.grad, and your function then put None back, so w\.grad "
                                 r"only looks untouched")}, r"^$"),
    # the clip runs before any gradient exists: it measures 0 and scales nothing
    "clip:before-backward": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            return total
        """, {"step-uses-clipped": ("fail", r"^Your function clipped before backward\(\), when "
                                    r"\.grad held no gradient of this batch: clip_grad_norm_ "
                                    r"found nothing to measure \(it measured 0\)"),
              "returns-norm": ("fail", r"^You returned 0, what clip_grad_norm_ measured before "
                               r"backward\(\)")},
        r"by the time your function clipped|return what clip_grad_norm_ returned"),
    # the clip measures the caller's leftovers, before this batch's gradient is added
    "clip:before-backward-with-leftovers": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            loss_fn(model(x), y).backward()
            optimizer.step()
            return total
        """, {"step-uses-clipped": ("fail", r"leftovers|before backward\(\)"),
              "returns-norm": ("fail", r"what clip_grad_norm_ measured before backward\(\)")},
        r"by the time your function clipped|return what clip_grad_norm_ returned"),
    "clip:after-step": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
            return nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        """, {"step-uses-clipped": ("fail", r"by the time your function clipped, the step had "
                                    r"already used it"),
              "returns-norm": ("pass", "")}, r"before backward\(\)"),
    "clip:never": ("clip-and-step", """
        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
            return 1.0
        """, {"step-uses-clipped": ("fail", r"^The step used the whole gradient, unclipped "
                                    r"\(total norm [0-9.]+, above max_norm [0-9.]+\): nothing "
                                    r"scaled it down"),
              "returns-norm": ("fail", r"^You returned 1, but the total norm of this batch's "
                               r"gradient, before clipping, was [0-9.]+\.$")},
        r"by the time your function clipped|clip_grad_norm_"),
    # a method named without its call, then used as a value: said from the learner's line
    "log:item-not-called": ("log-losses", """
        def total_loss(w):
            total = 0.0
            for target in (1.0, 2.0, 3.0):
                loss = ((w - target) ** 2).mean()
                total += loss.item
            return total
        """, {"runs": ("error", r"^`total_loss` stopped on check case 1 of 4: a line of your "
                       r"code names `loss\.item` without calling it, so Python took "
                       r"`loss\.item` itself, not what it returns, and then your code raised "
                       r"TypeError: unsupported operand")},
        r"File \"|Traceback|line \d"),
    "log:detach-not-called": ("log-losses", """
        def total_loss(w):
            total = 0.0
            for target in (1.0, 2.0, 3.0):
                total += float(((w - target) ** 2).mean().detach)
            return total
        """, {"runs": ("error", r"names `\(\(w - target\) \*\* 2\)\.mean\(\)\.detach` "
                       r"without calling it")}, r"File \"|Traceback"),
    # the data a line names (w.grad) is never taken for an uncalled method
    "snapshot:grad-is-data": ("snapshot", """
        def snapshot(w):
            return w + w.grad
        """, {"runs": ("error", r"your code raised TypeError")}, r"without calling it"),
    # the starter, on the seed of the review: one account of one run
    "loop:starter": ("fix-the-loop", "STARTER", {
        "clears-leftovers": ("fail", r"^Step 1 used the leftover gradients from before your "
                             r"function was called plus batch 1's gradient"),
        "per-batch-gradient": ("skip", r"^not judged until clears-leftovers passes$")},
        r"each step used only its own batch's gradient"),
    "loop:clears-at-the-end": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                optimizer.zero_grad()
            return losses
        """, {"clears-leftovers": ("fail", r"nothing cleared \.grad before the first backward"),
              "per-batch-gradient": ("skip", r"^not judged until clears-leftovers passes$")},
        r"each step used only its own batch's gradient"),
}


def source_of(label: str) -> str:
    exercise_id, source, _, _ = FILES[label]
    return course_exercise(exercise_id).starter if source == "STARTER" else dedent(source)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[Check]]]:
    """label -> the checks of each seed's run."""
    return checks_of_files({label: (eid, source_of(label)) for label, (eid, *_) in FILES.items()},
                           SEEDS, tmp_path_factory.mktemp("true-verdicts"))


@pytest.mark.parametrize("label", FILES)
def test_the_verdict_says_what_the_file_did(verdicts: dict[str, list[list[Check]]],
                                            label: str) -> None:
    _, _, expected, foreign = FILES[label]
    for seed, checks in zip(SEEDS, verdicts[label], strict=True):
        said = f"seed {seed}: " + "; ".join(f"{c.name}={c.status}: {c.message}" for c in checks)
        named = {c.name: c for c in checks}
        assert expected or all(c.status == "pass" for c in checks), said
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
