# expect: graph-broken
# A weight-normalised layer written by hand (after weight_norm in torch.nn.utils), reading the
# direction through .data: the scale g trains, the direction v never gets a gradient.
import torch
from torch import nn


class WNLinear(nn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.v = nn.Parameter(torch.randn(fan_out, fan_in) * 0.1)
        self.g = nn.Parameter(torch.ones(fan_out, 1))

    def forward(self, x):
        direction = self.v.data / self.v.data.norm(dim=1, keepdim=True)  # graph-broken here
        return x @ (self.g * direction).t()


torch.manual_seed(0)
model = nn.Sequential(WNLinear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(20):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
