# expect: never-cleared
# zero_grad() once an epoch instead of once a batch.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(48, 3), torch.randn(48, 1)
for epoch in range(5):
    optimizer.zero_grad()
    for i in range(0, 48, 8):
        loss = nn.functional.mse_loss(model(x[i:i + 8]), y[i:i + 8])
        loss.backward()
        optimizer.step()
