"""Attack (b), subtler: never runs backward on loss_fn(w). It puts the gradient in w.grad by
hand, then calls the checker's hooks on w from inside a real but unrelated backward pass (a
hook of its own on another tensor), so that a check for "inside a backward" alone is not
enough."""
import torch


def read_grad(w, loss_fn):
    (grad,) = torch.autograd.grad(loss_fn(w), w)
    w.grad = grad
    hooks = list(getattr(w, "_post_accumulate_grad_hooks", {}).values())
    other = torch.ones(1, requires_grad=True)

    def call_hooks(_):
        for hook in hooks:
            hook(w)

    other.register_post_accumulate_grad_hook(call_hooks)
    (other * 2).sum().backward()
    return w.grad
