# expect:
# unsure: eval-graph
# Validation once an epoch of 100 steps, in eval mode and under torch.no_grad(): the 20 steps
# observed do not reach it, so the doctor says there is an evaluation it could not check.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 4), torch.randn(32, 1)
for epoch in range(2):
    model.train()
    for step in range(100):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    model.eval()  # eval-graph here
    with torch.no_grad():
        print(epoch, nn.functional.mse_loss(model(x), y).item())
