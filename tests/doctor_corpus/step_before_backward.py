# expect: step-before-backward
# step() before backward(): each step uses nothing (the first) or last batch's gradients.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(30):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    optimizer.step()
    loss.backward()
