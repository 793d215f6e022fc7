"""`none-before-backward`: return (before, after), w.grad read before any backward (None) and
the gradient after one backward on loss_fn(w).

Worker side (`cases`, `expected`, `observe`) builds the tensors; tutor side (`judge`) decides.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import build_loss, close, fmt
from gradtutor.checking.checkers.grad_reading import (
    backward_runs,
    evidence,
    fresh_leaf,
    is_zeros_like,
    leaf_cases,
    multiple_of,
    not_the_grad,
    plain,
    ran,
    reference,
)
from gradtutor.checking.verdict import Check
from gradtutor.i18n import msg

FUNCTION = "grad_before_and_after"
ARITY = 2


cases = leaf_cases
expected = reference


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    w = fresh_leaf(case)
    trace.watch({"w": w})
    returned = fn(w, build_loss(case["loss"]))
    seen: dict[str, Any] = {"returned": trace.values(returned), "pair": False,
                            "events": list(trace.events)}
    if isinstance(returned, (tuple, list)) and len(returned) == 2:
        before, after = returned  # whatever they are, only trace.values' plain copies leave
        seen.update(pair=True, before=plain(trace, before), after=plain(trace, after),
                    before_is_grad=before is not None and before is w.grad,
                    after_is_grad=after is w.grad, same=before is not None and before is after)
    elif isinstance(returned, (tuple, list)):
        seen["length"] = len(returned)
    return seen


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    unpaired = [o for o in observed if not o["pair"]]
    if unpaired:
        return [returns_pair(unpaired[0])]
    checks = [Check("returns-pair", "pass", msg("you returned a pair (before, after)"))]
    runs = [backward_runs(o) for o in observed]

    not_none = [i for i, o in enumerate(observed) if o["before"] is not None]
    if not_none:
        i = not_none[0]
        checks.append(Check("before-is-none", "fail",
                            before_message(cases[i], expected[i], observed[i], runs[i]),
                            msg("read w.grad before any backward, and keep that value as it "
                                "is"),
                            evidence(cases[i], (msg("before: w.grad then"), msg("your before")),
                                     None, observed[i]["before"])))
    else:
        checks.append(Check("before-is-none", "pass",
                            msg("before was None: no gradient exists until the first "
                                "backward")))

    if all(n == 1 for n in runs):
        checks.append(Check("runs-backward", "pass", msg("backward ran exactly once")))
    elif any(n == 0 for n in runs):
        checks.append(Check("runs-backward", "fail",
                            msg("Your function never ran backward on loss_fn(w), so no "
                                "gradient reached w.grad."),
                            msg("run one backward pass on the loss between the two reads")))
    else:
        most = max(runs)
        checks.append(Check("runs-backward", "fail",
                            msg("backward {ran}: each call adds into w.grad, so `after` is "
                                "{most}x the gradient of one backward.", ran=ran(most),
                                most=most),
                            msg("call backward exactly once, between the two reads")))

    wrong = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["after"], e["grad"])]
    if wrong:
        i = wrong[0]
        o = observed[i]
        checks.append(Check("after-is-grad", "fail",
                            not_the_grad(msg("`after` was"), o["after"], cases[i], expected[i],
                                         runs[i], o["after_is_grad"]),
                            msg("after the backward call, read w.grad again"),
                            evidence(cases[i], (msg("gradient"), msg("your after")),
                                     expected[i]["grad"], o["after"])))
    else:
        checks.append(Check("after-is-grad", "pass", msg("after was the gradient")))
    return checks


def returns_pair(observed: dict[str, Any]) -> Check:
    """The failed `returns-pair` check for a return value that is not (before, after)."""
    returned = observed["returned"]
    if "length" in observed:
        what = msg("a {kind} of {length} values", kind=returned["not_a_tensor"],
                   length=observed["length"])
    elif returned is None:
        what = msg("None (is `return` missing?)")
    elif isinstance(returned, dict):
        what = msg("a {kind}", kind=returned["not_a_tensor"])
    else:
        what = msg("a single tensor, {value}", value=fmt(returned))
    return Check("returns-pair", "fail",
                 msg("You returned {what}, not a pair: return both reads, as `before, after`.",
                     what=what))


def before_message(case: dict[str, Any], expected: dict[str, Any], observed: dict[str, Any],
                   runs: int) -> str:
    before = observed["before"]
    if isinstance(before, dict):
        kind = before["not_a_tensor"]
        if kind == "ellipsis":
            return msg("`before` was `...`, the starter's placeholder: replace it with your "
                       "code.")
        if kind == "bool":
            return msg("`before` was a bool, not None: return the value of w.grad itself, not "
                       "a test such as `w.grad is None`.")
        if kind == "str":
            return msg("`before` was a string: return w.grad itself, which is the value None.")
        return msg("`before` was a {kind}, not None: before any backward, w.grad is None.",
                   kind=kind)
    if is_zeros_like(before, case["w"]):
        return msg("`before` was a tensor of zeros: PyTorch leaves .grad as None until the "
                   "first backward.")
    k = multiple_of(before, expected["grad"])
    if observed["before_is_grad"] or (k is not None and k > 0):
        if observed["same"]:
            return msg("`before` already held a gradient: you read w.grad after backward had "
                       "run. Read it first: before any backward, w.grad is None. `before` and "
                       "`after` are the same tensor, since w.grad is one tensor that backward "
                       "fills.")
        return msg("`before` already held a gradient: you read w.grad after backward had run. "
                   "Read it first: before any backward, w.grad is None.")
    return msg("`before` was a tensor, but before any backward w.grad is None: return w.grad "
               "as it is then.")
