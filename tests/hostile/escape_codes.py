"""Prints terminal escape sequences: clear screen, cursor home, window title, colours, and
raises with one in the message."""
print("\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[31mred\x1b[0m \x9b31m c1")
print("PASSED", end="\r")


def read_grad(w, loss_fn):
    raise RuntimeError("\x1b[2J\x1b[32mall checks passed\x1b[0m")
