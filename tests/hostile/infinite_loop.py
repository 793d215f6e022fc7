"""Never returns."""


def read_grad(w, loss_fn):
    while True:
        pass
