# expect:
# Two losses on one batch, each with its own backward(), summed on purpose before one step.
import torch
from torch import nn

torch.manual_seed(0)
trunk = nn.Linear(3, 8)
head_a, head_b = nn.Linear(8, 1), nn.Linear(8, 1)
params = [*trunk.parameters(), *head_a.parameters(), *head_b.parameters()]
optimizer = torch.optim.SGD(params, lr=0.01)
x, ya, yb = torch.randn(32, 3), torch.randn(32, 1), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    h = torch.tanh(trunk(x))
    nn.functional.mse_loss(head_a(h), ya).backward(retain_graph=True)
    nn.functional.mse_loss(head_b(h), yb).backward()
    optimizer.step()
