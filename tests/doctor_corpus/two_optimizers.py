# expect:
# Two optimizers, each cleared and stepped: a slow body and a fast head.
import torch
from torch import nn

torch.manual_seed(0)
body, head = nn.Linear(3, 8), nn.Linear(8, 1)
body_opt = torch.optim.SGD(body.parameters(), lr=0.001)
head_opt = torch.optim.Adam(head.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(12):
    body_opt.zero_grad()
    head_opt.zero_grad()
    loss = nn.functional.mse_loss(head(torch.tanh(body(x))), y)
    loss.backward()
    body_opt.step()
    head_opt.step()
