"""Asks for input."""


def read_grad(w, loss_fn):
    answer = input("what is the gradient? ")
    return answer
