"""SIGKILLs its parent's whole process group: the tutor and the script that ran it."""
import os
import signal


def read_grad(w, loss_fn):
    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
    return None
