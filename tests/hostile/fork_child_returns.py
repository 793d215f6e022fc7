"""Correct, and forks a child that returns, at import and in every call: each child must end
there, exit code 0, and never add to the verdict."""
import os

if (pid := os.fork()) == 0:
    CHILD_AT_IMPORT = True  # the child's module returns: the load is over for it
else:
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status


def read_grad(w, loss_fn):
    pid = os.fork()
    loss_fn(w).backward()
    if pid == 0:
        return w.grad  # the same answer, from the child
    _, status = os.waitpid(pid, 0)
    return w.grad if os.waitstatus_to_exitcode(status) == 0 else None
