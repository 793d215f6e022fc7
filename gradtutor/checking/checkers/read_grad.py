"""`read-grad`: run backward once on loss_fn(w) and return the gradient read from w.grad.

Worker side (`cases`, `expected`, `observe`) builds the tensors; tutor side (`judge`) decides.
"""

from __future__ import annotations

import random
from typing import Any

from gradtutor.checking.checkers.common import (
    LOSSES,
    build_loss,
    close,
    count,
    grad_table,
)
from gradtutor.checking.verdict import Check

FUNCTION = "read_grad"
ARITY = 2
CASES = 4


def cases(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for _ in range(CASES):
        size = rng.randint(2, 5)
        out.append({"w": [round(rng.uniform(-2, 2), 3) for _ in range(size)],
                    "loss": rng.choice(sorted(LOSSES))})
    return out


def expected(case: dict[str, Any]) -> dict[str, Any]:
    import torch

    w = torch.tensor(case["w"], dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(build_loss(case["loss"])(w), w)
    return {"grad": grad.tolist()}


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    import torch

    w = torch.tensor(case["w"], dtype=torch.float64, requires_grad=True)
    trace.watch({"w": w})
    returned = fn(w, build_loss(case["loss"]))
    return {"returned": trace.values(returned), "grad_after": trace.values(w.grad),
            "events": list(trace.events)}


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    checks: list[Check] = []
    backward_counts = [count(o["events"], "accumulate") for o in observed]
    if any(n == 0 for n in backward_counts):
        checks.append(Check(
            "runs-backward", "fail",
            "Your function never ran backward on loss_fn(w), so no gradient reached w.grad.",
            "call loss_fn(w).backward() before you read w.grad"))
    elif any(n > 1 for n in backward_counts):
        checks.append(Check(
            "runs-backward", "fail",
            f"backward ran {max(backward_counts)} times: each call adds into w.grad, so the "
            f"gradient you read is {max(backward_counts)}x too large.",
            "call backward exactly once"))
    else:
        checks.append(Check("runs-backward", "pass", "backward ran exactly once"))

    wrong_return = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
                    if not close(o["returned"], e["grad"])]
    if wrong_return:
        i = wrong_return[0]
        returned = observed[i]["returned"]
        if returned is None:
            message = "You returned None: return the gradient, w.grad, after backward."
        elif isinstance(returned, dict):
            message = f"You returned a {returned['not_a_tensor']}, not the gradient tensor."
        else:
            message = "The tensor you returned is not the gradient of the loss with respect to w."
        checks.append(Check("returns-grad", "fail", message, "return w.grad",
                            grad_table(cases[i]["w"], expected[i]["grad"], returned)))
    else:
        checks.append(Check("returns-grad", "pass", "you returned the gradient"))

    stale = [i for i, (e, o) in enumerate(zip(expected, observed, strict=True))
             if not close(o["grad_after"], e["grad"])]
    if stale and not wrong_return:
        checks.append(Check("grad-kept", "fail",
                            "Afterwards w.grad no longer holds the gradient: leave it in place.",
                            "read w.grad without clearing or changing it"))
    elif not stale:
        checks.append(Check("grad-kept", "pass", "w.grad holds the gradient afterwards"))
    return checks
