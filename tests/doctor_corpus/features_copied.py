# expect: graph-broken
# The first layer's output copied with torch.tensor(...): a new tensor with no graph, so no
# gradient reaches the first layer.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.tensor(h)  # graph-broken here
        return self.fc2(h)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(30):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
