"""`read-grad`: run backward once on loss_fn(w) and return the gradient read from w.grad.

Worker side (`cases`, `expected`, `observe`) builds the tensors; tutor side (`judge`) decides.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import close, shape
from gradtutor.checking.checkers.grad_reading import (
    RETURNED,
    backward_runs,
    evidence,
    leaf_cases,
    multiple_of,
    not_the_grad,
    observe_returned,
    ran,
    reference,
)
from gradtutor.checking.verdict import Check
from gradtutor.i18n import msg

FUNCTION = "read_grad"
ARITY = 2


cases = leaf_cases
expected = reference
observe = observe_returned


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    runs = [backward_runs(o) for o in observed]
    checks = [runs_backward(cases, expected, observed, runs)]

    wrong = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["returned"], e["grad"])]
    if wrong:
        i = wrong[0]
        o = observed[i]
        checks.append(Check(
            "returns-grad", "fail",
            not_the_grad(RETURNED, o["returned"], cases[i], expected[i], runs[i],
                         o["returned_is_grad"], bool(o.get("returns_backward"))),
            "",
            evidence(cases[i], (msg("gradient"), msg("you returned")), expected[i]["grad"],
                     o["returned"])))
    else:
        checks.append(Check("returns-grad", "pass", msg("you returned the gradient")))

    stale = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["grad_after"], e["grad"])]
    if not stale:
        checks.append(Check("grad-kept", "pass", msg("w.grad holds the gradient afterwards")))
    elif not wrong and runs[stale[0]] > 0:
        # a wrong return, or no backward at all, already names the mistake: one thing at a time
        i = stale[0]
        checks.append(Check("grad-kept", "fail", grad_not_kept(cases[i], expected[i],
                                                              observed[i]),
                            msg("read w.grad and leave it as it is"),
                            evidence(cases[i], (msg("gradient"), msg("w.grad afterwards")),
                                     expected[i]["grad"], observed[i]["grad_after"])))
    return checks


def runs_backward(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
                  observed: list[dict[str, Any]], runs: list[int]) -> Check:
    """Exactly one backward pass reached w, in every case."""
    if all(n == 1 for n in runs):
        return Check("runs-backward", "pass", msg("backward ran exactly once"))
    if any(n == 0 for n in runs):
        i = runs.index(0)
        if close(observed[i]["grad_after"], expected[i]["grad"]):
            return Check(
                "runs-backward", "fail",
                msg("w.grad holds the gradient, but no backward pass put it there: your code "
                    "assigned w.grad itself (torch.autograd.grad, for one, returns the "
                    "gradient without touching .grad)."),
                msg("let a backward pass fill w.grad for you"))
        if close(observed[i]["returned"], expected[i]["grad"]):
            return Check(
                "runs-backward", "fail",
                msg("You returned the right gradient, but no backward pass ran, so w.grad "
                    "stayed None: torch.autograd.grad, for one, returns the gradient without "
                    "storing it in .grad. This exercise is about the gradient that backward() "
                    "stores in w.grad."))
        return Check("runs-backward", "fail",
                     msg("Your function never ran backward on loss_fn(w), so no gradient "
                         "reached w.grad."),
                     msg("run a backward pass on the loss before you read w.grad"))
    most = max(runs)
    return Check("runs-backward", "fail",
                 msg("backward {ran}: each call adds into w.grad, so the gradient you read is "
                     "{most}x too large.", ran=ran(most), most=most),
                 msg("call backward exactly once"))


def grad_not_kept(case: dict[str, Any], expected: dict[str, Any],
                  observed: dict[str, Any]) -> str:
    after = observed["grad_after"]
    if after is None:
        return msg("Afterwards w.grad was None: your function cleared it (w.grad = None or "
                   "zero_grad()) after reading it. Leave the gradient in w.grad.")
    k = multiple_of(after, expected["grad"])
    if k == 0:
        return msg("Afterwards w.grad was all zeros: your function cleared it in place "
                   "(w.grad.zero_()) after reading it. Leave the gradient in w.grad.")
    if k is not None and k > 1:
        return msg("Afterwards w.grad was {k}x the gradient: backward ran again after you "
                   "read it, and added into w.grad.", k=k)
    if shape(after) != shape(case["w"]):
        return msg("Afterwards w.grad no longer had w's shape: leave w.grad as backward left "
                   "it.")
    return msg("Afterwards w.grad no longer held the gradient: leave it as backward left it.")
