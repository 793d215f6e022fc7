"""Connects to an abstract Unix socket the test (outside the check) listens on, as it might to
a desktop session's bus, and says whether it got through. Returns the wrong thing."""
import os
import socket

try:
    with socket.socket(socket.AF_UNIX) as client:
        client.connect("\0" + os.environ["GRADTUTOR_TEST_SOCKET"])
    print("connected")
except OSError as exc:
    print(f"refused ({exc.errno})")


def read_grad(w, loss_fn):
    return None
