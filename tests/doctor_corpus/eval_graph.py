# expect: eval-graph
# Validation under model.eval() but without torch.no_grad(): each pass builds a graph.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
xv, yv = torch.randn(16, 3), torch.randn(16, 1)
for epoch in range(4):
    model.train()
    for i in range(0, 32, 8):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x[i:i + 8]), y[i:i + 8]).backward()
        optimizer.step()
    model.eval()
    val_loss = nn.functional.mse_loss(model(xv), yv)
    print(f"epoch {epoch}: validation loss {val_loss.item():.4f}")
