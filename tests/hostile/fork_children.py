"""Forks three children that sleep for a minute, then returns the wrong thing."""
import os
import time

PIDS = os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "fork_children.pids")


def written() -> int:
    if not os.path.exists(PIDS):
        return 0
    with open(PIDS) as f:
        return len(f.read().split())


for _ in range(3):
    if os.fork() == 0:
        with open(PIDS, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(60)
        os._exit(0)
while written() < 3:  # all three are running before the check can end
    time.sleep(0.01)


def read_grad(w, loss_fn):
    return None
