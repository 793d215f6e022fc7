"""Never returns, and shrugs off SIGTERM: only SIGKILL stops it."""
import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def read_grad(w, loss_fn):
    n = 0
    while True:
        n += 1
