"""Waits for a thread that waits forever."""
import threading


def read_grad(w, loss_fn):
    worker = threading.Thread(target=threading.Event().wait)
    worker.start()
    worker.join()
    return w.grad
