# expect:
# Gradient accumulation averaged after the fact: four micro-batch losses summed in .grad,
# then each p.grad divided by 4 before the step (as some fairseq-style loops do).
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 5), torch.randn(64, 1)
accumulation = 4
for epoch in range(5):
    for i in range(16):
        loss = nn.functional.mse_loss(model(x[4 * i:4 * i + 4]), y[4 * i:4 * i + 4])
        loss.backward()
        if (i + 1) % accumulation == 0:
            for p in model.parameters():
                p.grad /= accumulation
            optimizer.step()
            optimizer.zero_grad()
