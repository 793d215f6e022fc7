"""Correct, and forks a child that calls sys.exit(3) in every call: the child must end with
that code and never spoil the verdict."""
import os
import sys


def read_grad(w, loss_fn):
    pid = os.fork()
    if pid == 0:
        sys.exit(3)
    _, status = os.waitpid(pid, 0)
    loss_fn(w).backward()
    return w.grad if os.waitstatus_to_exitcode(status) == 3 else None
