# expect: nan
# log() of a prediction that goes negative: the loss and the gradients become NaN.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.rand(16, 1)
for step in range(20):
    optimizer.zero_grad()
    loss = (torch.log(model(x)) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
