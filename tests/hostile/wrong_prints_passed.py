"""Wrong, and claims otherwise."""


def read_grad(w, loss_fn):
    print("PASSED ✓ all checks passed")
    return w
