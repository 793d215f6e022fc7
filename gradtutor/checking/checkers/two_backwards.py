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


# The start of what PyTorch raises for a second backward through a graph it already freed.
GRAPH_FREED = "Trying to backward through the graph a second time"

cases = leaf_cases
expected = reference


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    """As `observe_returned`; a second backward through a freed graph is reported as data (the
    first sentence of PyTorch's error), so that the judge can name the mistake."""
    try:
        return observe_returned(case, fn, trace)
    except RuntimeError as exc:
        said = str(exc)
        if GRAPH_FREED not in said:
            raise
        first = said.strip().splitlines()[0]
        end = first.find(". ")
        return {"graph_freed": first[:end + 1] if end > 0 else first,
                "events": list(trace.events)}


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    freed = [i for i, o in enumerate(observed) if "graph_freed" in o]
    if freed:
        return [graph_freed(cases[freed[0]], expected[freed[0]], observed[freed[0]])]
    runs = [backward_runs(o) for o in observed]
    checks = [backward_twice(expected, observed, runs)]

    wrong = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["returned"], scaled(e["grad"], WANT))]
    if wrong:
        i = wrong[0]
        checks.append(Check("doubled", "fail",
                            not_doubled(cases[i], expected[i], observed[i], runs[i]),
                            msg("compare w.grad after each backward with one gradient and "
                                "with twice that"),
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
                            "",
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
                 msg("two backward passes, each on a loss computed afresh"))


def graph_freed(case: dict[str, Any], expected: dict[str, Any],
                observed: dict[str, Any]) -> Check:
    """The second backward went through the graph the first one had freed."""
    steps = then([fmt(s) for s in accumulations(observed)]) or msg("no backward ran")
    base = leaf_evidence(case, (msg("one gradient"),), expected["grad"])
    return Check(
        "graph-freed", "fail",
        msg("Your second backward() went back through a graph the first one had already "
            "freed: backward() frees the tensors its graph saved as soon as it has used them, "
            "so the same loss cannot be differentiated again. Each backward pass needs a "
            "fresh graph: compute the loss again, with loss_fn(w), for the second pass."),
        "",
        Table(base.columns + (msg("w.grad after each backward"), msg("PyTorch raised")),
              ((*base.rows[0], steps, f"RuntimeError: {observed['graph_freed']}"),)))


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
