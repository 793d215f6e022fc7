# expect: eval-graph
# Validation every 5 steps under eval() and no_grad(), but model.train() never called again:
# from then on batch norm trains with its running statistics.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 4), torch.randn(64, 1)
xv, yv = torch.randn(32, 4), torch.randn(32, 1)
model.train()
for step in range(20):
    optimizer.zero_grad()
    batch = slice(16 * (step % 4), 16 * (step % 4) + 16)
    nn.functional.mse_loss(model(x[batch]), y[batch]).backward()
    optimizer.step()
    if step % 5 == 4:
        model.eval()
        with torch.no_grad():
            print("validation", nn.functional.mse_loss(model(xv), yv).item())
