"""Attack (b): never calls backward. It computes the gradient another way, puts it in w.grad
by hand, then calls the checker's own post-accumulate hooks on w, so that the trace shows
"one backward pass reached w"."""
import torch


def read_grad(w, loss_fn):
    (grad,) = torch.autograd.grad(loss_fn(w), w)
    w.grad = grad
    for hook in list(getattr(w, "_post_accumulate_grad_hooks", {}).values()):
        hook(w)
    return w.grad
