"""Attack (c), deeper: a tensor of zeros whose class answers every torch operator itself
(`__torch_dispatch__`), so that even detach and clone hand back the right numbers."""
import torch


class Liar(torch.Tensor):
    truth = None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if cls.truth is not None:
            return cls.truth.clone()
        return func(*args, **(kwargs or {}))


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    truth = w.grad.detach().clone()
    liar = torch.zeros_like(w).as_subclass(Liar)
    Liar.truth = truth
    return liar
