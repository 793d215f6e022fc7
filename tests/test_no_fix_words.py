"""No fix in words: no text a verdict can show (a check's message, its hint, shown with `v` or
`--verbose`, a known mistake, a notice of the exercise screen), in English or in Chinese,
tells the learner what to write, in words rather than code: "divide each micro-batch's loss
by the number of micro-batches", "switch the model to eval mode", "clear them first", "in
this order: ...". It says what went wrong and where to look. (The code of the fix, and
numbers to paste: tests/test_no_fix_unasked.py. The hint ladder is asked for, one rung at a
time, and is not walked here.) The review of 2026-12-05, F5."""

from __future__ import annotations

import re

import pytest
from verdict_texts import Text, static_texts

# A clause that tells the learner what to write, in words rather than code: it opens with one
# of the verbs a fix is said with ("call backward on errors", "clear them first", "switch the
# model to eval mode", "divide each loss by the number of ...", "scale first", "move X before
# Y", "run it once per batch"), or lays out the steps "in this order". A clause that says what
# went wrong, or where to look ("look at how many times your function clears"), is not one;
# nor is a verb further in ("nothing cleared w.grad in between").
FIX_WORDS = (
    (re.compile(r"^(?:divide|multiply)\b[^.:;]*\bby\b", re.I), "divide/multiply ... by"),
    (re.compile(r"^scale\b", re.I), "scale ..."),
    (re.compile(r"^call\b", re.I), "call X"),
    (re.compile(r"^(?:move|put)\b[^.:;]*\b(?:before|after|first|last)\b", re.I),
     "move X before Y"),
    (re.compile(r"^(?:switch|turn)\b", re.I), "switch/turn X on, off or to"),
    (re.compile(r"^(?:clear|zero)\b", re.I), "clear ..."),
    (re.compile(r"\bin this order\b|\bmust come (?:before|after)\b", re.I), "in this order"),
    (re.compile(r"^ask\b[^.:;]*\b(?:to keep|for)\b", re.I), "ask X to keep / for Y"),
    (re.compile(r"^(?:run|compute)\b[^.:;]*\b(?:once|one|before|after|between|instead)\b",
                re.I), "run/compute X once, or before Y"),
    # Chinese: the same verbs told (请, 要, 先 before them), a sum to do, or the steps in order
    (re.compile(r"^(?:请|要|先)(?:调用|清空|清零|切换|除以|乘以|缩放|移到|放到|打开|关掉)|^(?:除以|乘以)"),
     "zh: the fix's verb"),
    (re.compile(r"按(?:这个|以下|下面的)顺序"), "zh: in this order"),
)
FIX_CLAUSE = re.compile(r"[.:;!?](?:\s+|$)|[。：；，！？（）]|\bthen\b|\band\b|, ")


def fix_words(text: str) -> list[str]:
    """The clauses of `text` that say the fix in words, each with the rule that found it."""
    found = []
    for clause in FIX_CLAUSE.split(text):
        clause = clause.strip().strip("`")
        found += [f"{name}: {clause!r}" for pattern, name in FIX_WORDS if pattern.search(clause)]
    return found


def test_the_fix_words_are_found_in_what_the_reviews_quoted() -> None:
    """The review of 2026-12-05, F5: verdict lines that said the fix in words; and words
    that say what went wrong, or where to look, pass."""
    for said in ("switch the model to eval mode before the first forward pass",
                 "divide each micro-batch's loss by the number of micro-batches",
                 "in each step, in this order: clear the gradients, compute the loss, run "
                 "backward, then step",
                 "ask pred to keep its gradient before the backward pass",
                 "scale first, then switch tracking on",
                 "The step used leftover gradients: clear them first.",
                 "call zero_grad before backward", "move the clip before the step",
                 "backward ran 3 times: run it once per batch.",
                 "先缩放，再打开跟踪", "每一步都按这个顺序：清空梯度、算损失"):
        assert fix_words(said), said
    for said in ("look at the order of the calls in each step of your loop",
                 "The second update used batch 1's gradient too: nothing cleared w.grad in "
                 "between, and backward adds into it.",
                 "Forgets to switch tracking on.", "step 1 used",
                 "look at how many times your function clears the gradients",
                 "调用前残留的 .grad", "只清空了每个参数组的第一个参数", "调用方的 w 一直没变",
                 "optimizer.step() ran before backward: step 2 had no backward pass before it."):
        assert not fix_words(said), said


# what a verdict shows; "why it works" comes after a pass, the hint ladder when asked for
SHOWN = [text for text in static_texts()
         if not text.where.endswith("/why") and "/hint " not in text.where]


@pytest.mark.parametrize("text", SHOWN, ids=[f"{t.lang}:{t.where}" for t in SHOWN])
def test_no_text_a_verdict_shows_says_the_fix_in_words(text: Text) -> None:
    """Every message, hint (shown with `v` or `--verbose`, still unasked for the fix) and
    known mistake says what went wrong and where to look, never what to write."""
    assert fix_words(text.text) == [], text.text
