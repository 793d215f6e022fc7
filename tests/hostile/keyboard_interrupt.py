def read_grad(w, loss_fn):
    raise KeyboardInterrupt
