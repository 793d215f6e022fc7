# expect: graph-broken
# A train() function called from a loop that wraps both training and evaluation in
# torch.no_grad() (as people do when they copy the test loop of pytorch/examples' mnist).
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))


def train_epoch():
    model.train()
    for i in range(0, 32, 8):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8])  # graph-broken here
        loss.backward()
        optimizer.step()


for epoch in range(5):
    with torch.no_grad():
        train_epoch()
