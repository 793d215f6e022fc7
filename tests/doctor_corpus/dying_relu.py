# expect: dead-units
# ReLUs that die on the way: the units learn at first, then a learning rate too high throws
# most of them where their input is negative for every example, and from then on no gradient
# reaches them (the loss stays finite: nothing else looks wrong).
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 3), torch.randn(64, 1) + 5
for step in range(20):
    if step == 4:
        for group in optimizer.param_groups:
            group["lr"] = 0.3
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
