"""Allocates 256 MiB tensors until allocation fails (torch's "can't allocate memory")."""
import torch

hoard = []


def read_grad(w, loss_fn):
    while True:
        hoard.append(torch.empty(2**25, dtype=torch.float64))
