# expect: cleared-before-step
# zero_grad() between backward() and step(): every step sees None and nothing learns.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(30):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
