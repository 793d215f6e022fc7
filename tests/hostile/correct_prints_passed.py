"""Correct, and chatty."""


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    print("passed")
    return w.grad
