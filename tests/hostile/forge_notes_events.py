"""Attack (b), through the front door: never calls backward, and adds an "accumulate" event
with the method checkers use for events of their own (`Trace.note`)."""
import sys

import torch


def read_grad(w, loss_fn):
    (grad,) = torch.autograd.grad(loss_fn(w), w)
    w.grad = grad
    trace = sys.modules["gradtutor.checking.trace"]
    trace.current().note({"event": "accumulate", "param": "w", "grad": grad.tolist()})
    return w.grad
