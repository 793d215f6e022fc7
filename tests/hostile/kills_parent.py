"""SIGKILLs its parent: the tutor in a cold check, the fork server in a warm one."""
import os
import signal


def read_grad(w, loss_fn):
    os.kill(os.getppid(), signal.SIGKILL)
    return None
