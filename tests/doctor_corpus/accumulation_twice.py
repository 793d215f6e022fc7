# expect: accumulation-scale
# The loss divided by the number of micro-batches twice: each step gets a quarter of the mean.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 3), torch.randn(64, 1)
k = 4
for epoch in range(4):
    for i in range(16):
        batch = slice(4 * i, 4 * i + 4)
        loss = nn.functional.mse_loss(model(x[batch]), y[batch]) / k
        (loss / k).backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
