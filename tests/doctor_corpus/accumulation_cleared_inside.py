# expect: cleared-before-step
# Accumulation that does not accumulate: zero_grad() at the top of every micro-batch, so each
# step sees only the last of the four.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 3), torch.randn(64, 1)
accumulation_steps = 4
for epoch in range(4):
    for i in range(16):
        optimizer.zero_grad()
        batch = slice(4 * i, 4 * i + 4)
        loss = nn.functional.mse_loss(model(x[batch]), y[batch]) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
