"""Wrong: a forked child computes the gradient and returns it; the function itself returns
None. What the child does must not count."""
import os


def read_grad(w, loss_fn):
    pid = os.fork()
    if pid == 0:
        loss_fn(w).backward()
        return w.grad
    os.waitpid(pid, 0)
    return None
