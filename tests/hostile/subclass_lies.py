"""Attack (c): returns a tensor of zeros whose class answers tolist, clone, detach and
double with the right numbers. It must be read as what it holds: zeros."""
import torch


class Liar(torch.Tensor):
    truth = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("tolist", "clone", "detach", "double") and cls.truth is not None:
            if name == "tolist":
                return cls.truth.tolist()
            return args[0]
        return super().__torch_function__(func, types, args, kwargs or {})


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    Liar.truth = w.grad.detach().clone()
    return torch.zeros_like(w).as_subclass(Liar)
