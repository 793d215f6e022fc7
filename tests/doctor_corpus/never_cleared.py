# expect: never-cleared
# The classic bug: zero_grad() is missing, so .grad piles up across steps.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 4), torch.randn(64, 1)
for epoch in range(30):
    for i in range(0, 64, 16):
        loss = nn.functional.mse_loss(model(x[i:i + 16]), y[i:i + 16])
        loss.backward()
        optimizer.step()
