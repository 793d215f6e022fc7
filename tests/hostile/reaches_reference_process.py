"""Attack: in a warm check, the fork server's reference process computes the references
beside the check's child (a child of the same server). This file finds every other process
below its parent and tries to read its memory (as forge_reads_reference.py would) and to kill
it, so the next checks have no references; it notes what happened for the test, then does the
exercise properly, so that its own verdict is a pass either way."""
import json
import os
import signal

parent = os.getppid()
try:
    with open(f"/proc/{parent}/task/{parent}/children") as listing:
        others = [int(pid) for pid in listing.read().split() if int(pid) != os.getpid()]
except OSError:
    others = []
seen = {}
for pid in others:
    tried = {}
    try:
        with open(f"/proc/{pid}/mem", "rb"):
            tried["mem"] = "opened"
    except OSError as exc:
        tried["mem"] = type(exc).__name__
    try:
        os.kill(pid, signal.SIGKILL)
        tried["kill"] = "sent"
    except OSError as exc:
        tried["kill"] = type(exc).__name__
    seen[pid] = tried
notes = os.environ.get("GRADTUTOR_TEST_PIDDIR")
if notes:
    with open(os.path.join(notes, "reaches.json"), "w") as file:
        json.dump(seen, file)


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
