# expect: step-before-backward
# optimizer.step() forgotten: the gradients are made and cleared, the weights never move.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(10):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    print(f"step {step}: loss {loss.item():.4f}")
