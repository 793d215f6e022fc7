# expect: eval-graph
# pytorch/examples' mnist main.py with model.train() moved out of train() to before the epochs:
# the first validation's model.eval() is never undone, so from the second epoch on dropout is
# off while the model trains.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, 3))
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
model.train()
for epoch in range(4):
    for i in range(0, 32, 8):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8])  # eval-graph here
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print("test loss", nn.functional.cross_entropy(model(x), y).item())
