# expect:
# Gradient descent by hand, as in the PyTorch "Learning PyTorch with Examples" tutorial:
# the update under no_grad(), then w.grad.zero_(), b.grad.data.zero_() and c.grad = None.
import torch

torch.manual_seed(0)
x = torch.linspace(-1, 1, 64)
y = torch.sin(x)
a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
lr = 0.05
for t in range(40):
    loss = (a + b * x + c * x ** 2 - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        a -= lr * a.grad
        b -= lr * b.grad
        c -= lr * c.grad
        a.grad.zero_()
    b.grad.data.zero_()
    c.grad = None
print(a.item(), b.item(), c.item())
