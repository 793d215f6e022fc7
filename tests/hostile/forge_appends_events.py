"""Attack (b): never calls backward. It computes the gradient another way, puts it in w.grad
by hand, and appends an "accumulate" event to the checker's trace itself."""
import sys

import torch


def read_grad(w, loss_fn):
    (grad,) = torch.autograd.grad(loss_fn(w), w)
    w.grad = grad
    trace = sys.modules["gradtutor.checking.trace"]
    trace.current().events.append({"event": "accumulate", "param": "w",
                                   "grad": grad.tolist()})
    return w.grad
