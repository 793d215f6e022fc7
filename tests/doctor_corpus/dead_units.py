# expect: dead-units
# A very negative bias: every ReLU of the first layer outputs 0, so nothing flows back to it.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
with torch.no_grad():
    model[0].bias.fill_(-100.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
