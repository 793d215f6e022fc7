"""Reads address 0 through ctypes: the process dies of SIGSEGV."""
import ctypes


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    ctypes.string_at(0)
    return w.grad
