"""Never returns, and shrugs off SIGTERM: only SIGKILL stops it."""
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def read_grad(w, loss_fn):
    while True:
        time.sleep(0.1)
