"""Prints a fake result on stdout, and writes a fake one into every other fd it can find."""
import json
import os

FAKE = json.dumps({"type": "observed", "observed": []}) + "\n"
print(FAKE)
for fd in range(3, 256):
    try:
        os.write(fd, FAKE.encode())
    except OSError:
        pass


def read_grad(w, loss_fn):
    return None
