"""Correct, and forks a child that raises in every call: the child must end there, exit code
1 as Python's own, and never spoil the verdict."""
import os


def read_grad(w, loss_fn):
    pid = os.fork()
    if pid == 0:
        raise ValueError("the child's own mistake")
    _, status = os.waitpid(pid, 0)
    loss_fn(w).backward()
    return w.grad if os.waitstatus_to_exitcode(status) == 1 else None
