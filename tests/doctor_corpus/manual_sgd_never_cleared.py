# expect: never-cleared
# Gradient descent by hand through .data, as old tutorials do, and .grad never cleared.
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
for step in range(30):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w.data -= 0.01 * w.grad.data
