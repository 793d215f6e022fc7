# expect: eval-graph
# The validation loop of pytorch/examples' word_language_model, on a model with dropout,
# without torch.no_grad(): model.eval() is right, the graph each pass builds is the bug.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
xv, yv = torch.randn(16, 3), torch.randn(16, 1)


def evaluate():
    model.eval()
    total = 0.0
    for i in range(0, 16, 8):
        total += nn.functional.mse_loss(model(xv[i:i + 8]), yv[i:i + 8])  # eval-graph here
    return total / 2


for epoch in range(4):
    model.train()
    for i in range(0, 32, 8):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x[i:i + 8]), y[i:i + 8]).backward()
        optimizer.step()
    val_loss = evaluate()
    print(f"epoch {epoch}: validation loss {float(val_loss):.4f}")
