# expect:
# Fine-tuning a head: the backbone frozen with requires_grad=False and left out of the
# optimizer; evaluation under torch.inference_mode().
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(3, 8), nn.ReLU())
head = nn.Linear(8, 1)
for p in backbone.parameters():
    p.requires_grad = False
optimizer = torch.optim.Adam(head.parameters(), lr=0.01)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(20):
    optimizer.zero_grad()
    nn.functional.mse_loss(head(backbone(x)), y).backward()
    optimizer.step()
    if step % 10 == 0:
        head.eval()
        with torch.inference_mode():
            print("eval loss", nn.functional.mse_loss(head(backbone(x)), y).item())
        head.train()
