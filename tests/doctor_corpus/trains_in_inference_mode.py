# expect: graph-broken
# The pytorch/examples MNIST loop, small, with the whole run inside torch.inference_mode()
# (meant for the test loop only), the model made there too: no graph is ever built, so
# backward() has nothing to follow.
import torch
from torch import nn

torch.manual_seed(0)
with torch.inference_mode():
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
    for step in range(20):
        optimizer.zero_grad()
        output = model(x)  # graph-broken here
        loss = nn.functional.cross_entropy(output, y)
        loss.backward()
        optimizer.step()
