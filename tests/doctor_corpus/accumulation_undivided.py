# expect: accumulation-scale
# Four micro-batches per step, the loss not divided by 4: each step is 4x the mean gradient.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 3), torch.randn(64, 1)
accumulation_steps = 4
for epoch in range(4):
    optimizer.zero_grad()
    for i in range(16):
        batch = slice(4 * i, 4 * i + 4)
        loss = nn.functional.mse_loss(model(x[batch]), y[batch])
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
