"""Forks three children that sleep for a minute, then returns the wrong thing."""
import os
import time

PIDS = os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "fork_children.pids")

for _ in range(3):
    pid = os.fork()
    if pid == 0:
        with open(PIDS, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(60)
        os._exit(0)


def read_grad(w, loss_fn):
    return None
