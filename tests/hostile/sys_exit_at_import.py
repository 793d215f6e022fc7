import sys

sys.exit(0)


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
