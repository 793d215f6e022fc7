# expect:
# Gradient accumulation under mixed precision, adapted from PyTorch's AMP examples
# (docs/source/notes/amp_examples.rst, "Gradient accumulation"): the loss divided by the
# micro-steps inside autocast, scaler.scale(loss).backward(), and every k batches
# scaler.step(), scaler.update() and zero_grad(). The scale hides the divisor in the graph.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
x, y = torch.randn(96, 8), torch.randn(96, 1)
iters_to_accumulate = 3
for epoch in range(3):
    for i in range(24):
        batch = slice(4 * i, 4 * i + 4)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x[batch]).float(), y[batch])
            loss = loss / iters_to_accumulate
        scaler.scale(loss).backward()
        if (i + 1) % iters_to_accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
