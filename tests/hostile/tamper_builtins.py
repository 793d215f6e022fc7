"""Breaks print and, once loaded, every import."""
import builtins

builtins.print = None


def _no_imports(*args, **kwargs):
    raise ImportError("imports are switched off")


builtins.__import__ = _no_imports


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
