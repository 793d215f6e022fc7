# expect: graph-broken
# .data between the layers cuts the graph where the probe cannot see it (an attribute, not a
# call it watches): the doctor says the cut was not seen rather than guess a line.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x)).data
        return self.fc2(h)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(30):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    print(f"loss {loss.item():.4f}")
    loss.backward()
    optimizer.step()
