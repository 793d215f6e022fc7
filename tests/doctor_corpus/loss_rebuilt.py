# expect: graph-broken
# The loss rebuilt from its value with torch.tensor(..., requires_grad=True): backward() runs,
# but it starts from a new leaf, and no gradient reaches the model.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    value = nn.functional.mse_loss(model(x), y).item()  # graph-broken here
    loss = torch.tensor(value, requires_grad=True)
    loss.backward()
    optimizer.step()
