# expect: graph-broken
# A hand-written linear layer (as in the "nn from scratch" tutorial of pytorch.org) whose bias
# is detached in forward(): the weight trains, the bias never gets a gradient.
import torch
from torch import nn


class Linear(nn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(fan_out, fan_in) / fan_in ** 0.5)
        self.bias = nn.Parameter(torch.zeros(fan_out))

    def forward(self, x):
        return x @ self.weight.t() + self.bias.detach()  # graph-broken here


torch.manual_seed(0)
model = nn.Sequential(Linear(3, 8), nn.ReLU(), Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1) + 3
for step in range(20):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
