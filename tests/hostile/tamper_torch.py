"""Replaces Tensor.backward by one that writes .grad by hand, and torch.autograd.grad by a
liar: neither may fool the references or the trace."""
import torch

torch.autograd.grad = lambda outputs, inputs, *args, **kwargs: (torch.ones_like(inputs),)


def fake_backward(self, *args, **kwargs):
    pass


torch.Tensor.backward = fake_backward


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    w.grad = 2 * w.detach()  # right only for one of the losses
    return w.grad
