# expect: not-in-optimizer
# The optimizer is given the encoder's parameters only; the head gets gradients, never steps.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.encoder(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.encoder.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(30):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
