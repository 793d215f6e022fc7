# expect: cleared-before-step
# Gradient descent by hand with the clearing one line too early: the update subtracts zeros.
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
for step in range(30):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w.grad.zero_()
    with torch.no_grad():
        w -= 0.1 * w.grad
