# expect: never-cleared
# L-BFGS whose closure forgets zero_grad(): each evaluation adds onto the gradients of the
# points it tried before.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
x = torch.randn(32, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1


def closure():
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(4):
    optimizer.step(closure)
