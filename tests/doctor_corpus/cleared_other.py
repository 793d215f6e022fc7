# expect: cleared-other
# Two optimizers, one for the body and one for the head; only the body's is cleared, so the
# head's gradients pile up.
import torch
from torch import nn

torch.manual_seed(0)
body, head = nn.Linear(3, 4), nn.Linear(4, 1)
body_opt = torch.optim.SGD(body.parameters(), lr=0.01)
head_opt = torch.optim.SGD(head.parameters(), lr=0.001)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(15):
    body_opt.zero_grad()
    loss = nn.functional.mse_loss(head(torch.relu(body(x))), y)
    loss.backward()
    body_opt.step()
    head_opt.step()
