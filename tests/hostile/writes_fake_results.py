"""Prints a fake result on stdout, and writes a fake one into every other fd it can find."""
import contextlib
import json
import os

FAKE = json.dumps({"type": "observed", "observed": []}) + "\n"
print(FAKE)
for fd in range(3, 256):
    with contextlib.suppress(OSError):
        os.write(fd, FAKE.encode())


def read_grad(w, loss_fn):
    return None
