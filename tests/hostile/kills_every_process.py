"""kill(-1, SIGKILL): every process it may signal. Then returns the wrong thing.

Only where it is confined (its parent cannot be signalled): unconfined, as root, this would
end every process on the machine, which is not a test of the tutor."""
import os
import signal


def read_grad(w, loss_fn):
    try:
        os.kill(os.getppid(), 0)  # signal 0 only asks whether it may
    except PermissionError:
        os.kill(-1, signal.SIGKILL)
    return None
