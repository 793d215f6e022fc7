# expect: not-in-optimizer
# Fine-tuning: the optimizer is made before the head is replaced, so it holds the old head's
# parameters; the new head gets gradients and never changes.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.fc = nn.Linear(16, 3)  # our 3 classes
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
for step in range(20):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
