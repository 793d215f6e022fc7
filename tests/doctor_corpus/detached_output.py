# expect: graph-broken
# The model's output detached before the loss: the loss has no graph, and backward() fails.
# The graph was cut at the .detach(), not at the backward() that found out.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    features = model(x).detach()  # graph-broken here
    loss = nn.functional.mse_loss(features, y)
    loss.backward()
    optimizer.step()
