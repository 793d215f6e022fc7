"""SIGSTOPs its parent, which would leave the tutor (or the fork server) frozen."""
import os
import signal


def read_grad(w, loss_fn):
    os.kill(os.getppid(), signal.SIGSTOP)
    return None
