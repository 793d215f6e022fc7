"""Double-forks a grandchild that leaves the session (setsid) and sleeps for a minute: a
daemon that a process-group kill cannot reach. The grandchild keeps the inherited pipes."""
import os
import time

PIDS = os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "setsid_grandchild.pids")

child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        with open(PIDS + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(PIDS + ".tmp", PIDS)
        time.sleep(60)
        os._exit(0)
    while not os.path.exists(PIDS):  # the grandchild is an orphan only once it is written down
        time.sleep(0.01)
    os._exit(0)
os.waitpid(child, 0)


def read_grad(w, loss_fn):
    return None
