# expect: exploding
# A learning rate far too high for unscaled inputs: the gradients grow step after step
# (ten steps: a few more, and they overflow to inf).
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 3) * 10
y = x.sum(1, keepdim=True)
for step in range(10):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
