"""Double-forks a grandchild that leaves the session (setsid) and then exec's `sleep`: its
command line no longer says anything about the check, only its environment still carries the
check's mark. Writes the grandchild's pid, and the mark it inherited."""
import os
import time

NOTES = os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "setsid_exec_sleep")

child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        with open(NOTES + ".mark", "w") as f:
            f.write(os.environ.get("GRADTUTOR_CHECK_MARK", ""))
        with open(NOTES + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(NOTES + ".tmp", NOTES + ".pids")
        os.execvp("sleep", ["sleep", "60"])
    while not os.path.exists(NOTES + ".pids"):  # an orphan only once it is written down
        time.sleep(0.01)
    os._exit(0)
os.waitpid(child, 0)


def read_grad(w, loss_fn):
    return None
