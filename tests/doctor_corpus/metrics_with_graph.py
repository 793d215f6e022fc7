# expect: eval-graph
# Training-set accuracy measured with a forward pass of its own, outside torch.no_grad(): a
# graph is built for it every step and thrown away.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
for step in range(20):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    accuracy = (model(x).argmax(1) == y).float().mean().item()
