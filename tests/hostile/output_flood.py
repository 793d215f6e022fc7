"""Prints millions of lines (twenty thousand one at a time, two million in one call), then
returns the wrong thing."""
for i in range(20_000):
    print("flood line", i)
print("flood line\n" * 2_000_000)


def read_grad(w, loss_fn):
    return w
