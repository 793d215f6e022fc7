# expect: eval-graph
# model.eval() for a first validation, and model.train() never called: dropout stays off
# while the model trains.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
model.eval()
with torch.no_grad():
    print("before training:", nn.functional.mse_loss(model(x), y).item())
for step in range(20):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
