# expect: graph-broken
# .item() on the loss before backward(): it is a Python float now, and the script stops.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y).item()  # graph-broken here
    loss.backward()
    optimizer.step()
