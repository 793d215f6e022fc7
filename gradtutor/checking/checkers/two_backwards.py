"""`two-backwards`: call backward twice (a fresh loss_fn(w) each time) without clearing, and
return w.grad, which then holds twice the gradient of one backward.

Worker side (`cases`, `expected`, `observe`) builds the tensors; tutor side (`judge`) decides.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import close, fmt
from gradtutor.checking.checkers.grad_reading import (
    RETURNED,
    accumulations,
    backward_runs,
    leaf_cases,
    multiple_of,
    not_the_grad,
    observe_returned,
    ran,
    reference,
    scaled,
)
from gradtutor.checking.checkers.grad_reading import evidence as leaf_evidence
from gradtutor.checking.verdict import Check, Table
from gradtutor.i18n import msg

FUNCTION = "grad_after_two_backwards"
ARITY = 2
WANT = 2  # backward passes, and so gradients' worth in w.grad


cases = leaf_cases
expected = reference
observe = observe_returned


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    runs = [backward_runs(o) for o in observed]
    checks = [backward_twice(expected, observed, runs)]

    wrong = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["returned"], scaled(e["grad"], WANT))]
    if wrong:
        i = wrong[0]
        checks.append(Check("doubled", "fail",
                            not_doubled(cases[i], expected[i], observed[i], runs[i]),
                            msg("run loss_fn(w).backward() twice, touch nothing in between, "
                                "then return w.grad"),
                            evidence(cases[i], expected[i], observed[i])))
    else:
        checks.append(Check("doubled", "pass", msg("w.grad held twice the gradient")))

    stale = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["grad_after"], scaled(e["grad"], WANT))]
    if not stale:
        checks.append(Check("grad-kept", "pass", msg("w.grad still holds both gradients")))
    elif not wrong and all(n == WANT for n in runs):  # else a check above names the mistake
        i = stale[0]
        after = observed[i]["grad_after"]
        what = (msg("None: your function cleared it") if after is None
                else msg("all zeros: your function cleared it in place")
                if multiple_of(after, expected[i]["grad"]) == 0
                else msg("different: your function changed it"))
        checks.append(Check("grad-kept", "fail",
                            msg("You returned the right values, but afterwards w.grad was "
                                "{what} after reading it. Leave w.grad as the two backward "
                                "calls left it.", what=what),
                            msg("return w.grad and leave it in place"),
                            evidence(cases[i], expected[i], observed[i])))
    return checks


def backward_twice(expected: list[dict[str, Any]], observed: list[dict[str, Any]],
                   runs: list[int]) -> Check:
    """Exactly two backward passes reached w, in every case."""
    if all(n == WANT for n in runs):
        return Check("backward-twice", "pass", msg("backward ran twice"))
    i = next(i for i, n in enumerate(runs) if n != WANT)
    n = runs[i]
    if n == 0:
        message = msg("Your function never ran backward on loss_fn(w), so no gradient "
                      "reached w.grad.")
    elif n == 1 and close(observed[i]["returned"], scaled(expected[i]["grad"], WANT)):
        message = msg("backward ran once, yet you returned twice the gradient: you doubled it "
                      "by hand (2 * w.grad, or a doubled loss). The point is that a second "
                      "backward call adds into w.grad by itself.")
    else:
        message = msg("backward {ran}; this exercise needs exactly two calls, and each call "
                      "adds one gradient into w.grad.", ran=ran(n))
    return Check("backward-twice", "fail", message,
                 msg("call loss_fn(w).backward() two times: compute the loss afresh for each "
                     "call"))


def not_doubled(case: dict[str, Any], expected: dict[str, Any], observed: dict[str, Any],
                runs: int) -> str:
    """Why the returned value is not twice the gradient, in the learner's terms."""
    returned = observed["returned"]
    grad = expected["grad"]
    k = multiple_of(returned, grad)
    steps = accumulations(observed)
    if k == 1:
        if runs >= 2 and close(steps[1], grad):
            return msg("Your .grad holds 1x the gradient: it was cleared between the two "
                       "backward calls (w.grad = None or w.grad.zero_()), so the second one "
                       "started from nothing. Leave w.grad alone between them.")
        if runs == 1:
            return msg("Your .grad holds 1x the gradient: backward ran only once.")
        if close(observed["grad_after"], scaled(grad, WANT)):
            return msg("You returned a copy of w.grad taken after the first backward; the "
                       "second backward added into w.grad afterwards. Return w.grad at the "
                       "end.")
        return msg("You returned 1x the gradient, not twice it.")
    if k is not None and k > WANT and runs == k:
        return msg("Your .grad holds {k}x the gradient: backward {ran}, once too many.",
                   k=k, ran=ran(k))
    if returned is None and runs > 0 and observed["grad_after"] is None:
        return msg("You returned None, and w.grad was None afterwards: your function cleared "
                   "it after the backward calls. Return w.grad before clearing anything (or "
                   "do not clear).")
    return not_the_grad(RETURNED, returned, case, expected, runs,
                        observed["returned_is_grad"])


def evidence(case: dict[str, Any], expected: dict[str, Any], observed: dict[str, Any]) -> Table:
    """w and the loss; one gradient and two; what w.grad held after each of the learner's
    backward passes; and what they returned."""
    steps = then([fmt(s) for s in accumulations(observed)]) or msg("no backward ran")
    base = leaf_evidence(case, (msg("one gradient"), msg("twice that")), expected["grad"],
                         scaled(expected["grad"], WANT))
    return Table(base.columns + (msg("w.grad after each backward"), msg("you returned")),
                 ((*base.rows[0], steps, fmt(observed["returned"])),))


def then(values: list[str]) -> str:
    """`a then b then c`: values one after another, as a message."""
    if len(values) <= 1:
        return values[0] if values else ""
    return msg("{earlier} then {later}", earlier=then(values[:-1]), later=values[-1])
