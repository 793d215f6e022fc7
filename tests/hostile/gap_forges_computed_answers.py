"""The gap docs/isolation.md states: no function of its own, but it computes the right answers
itself (the exercise's cases are no secret: it finds them on the worker's stack), then writes
a whole observation, trace and all, into every pipe it holds and exits. The reference is
nowhere it can read, so it must compute every answer; a forged result is worth what that
costs, which is more than copying the solution. tests/test_forgery.py checks that this still
passes, so that the documented gap stays true."""
import json
import os
import sys

import torch

from gradtutor.checking.checkers.common import build_loss


def the_cases():
    frame = sys._getframe()
    while frame is not None:
        cases = frame.f_locals.get("cases")
        if isinstance(cases, list) and cases and all("loss" in c for c in cases):
            return cases
        frame = frame.f_back
    return None


cases = the_cases()
if cases is not None:
    observed = []
    for case in cases:
        w = torch.tensor(case["w"], dtype=torch.float64, requires_grad=True)
        (grad,) = torch.autograd.grad(build_loss(case["loss"])(w), w)
        values = grad.tolist()
        observed.append({"returned": values, "returned_is_grad": True, "grad_after": values,
                         "events": [{"event": "accumulate", "param": "w", "grad": values}],
                         "returns_backward": False, "loss_calls": 1})
    line = (json.dumps({"type": "observed", "observed": observed}) + "\n").encode()
    for name in os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                os.write(int(name), line)
        except OSError:
            pass
    os._exit(0)
