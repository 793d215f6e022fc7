"""Correct, but leaves a non-daemon thread blocked forever: the check must still end."""
import threading

threading.Thread(target=threading.Event().wait).start()


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
