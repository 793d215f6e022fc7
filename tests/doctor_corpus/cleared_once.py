# expect: never-cleared
# zero_grad() once, before the loop: from the second step on, .grad piles up.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
optimizer.zero_grad()
for step in range(30):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
