# expect:
# Mixed precision with torch.amp.GradScaler, adapted from PyTorch's AMP recipe
# (recipes/recipes/amp_recipe.py): the first scale is so large that the first backward passes
# overflow float16, so scaler.step() skips those steps, the scale drops, and zero_grad()
# clears the overflowed gradients. Not accumulation.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=1000)
x, y = torch.randn(64, 8), torch.randn(64, 1)
for step in range(12):
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
print("scale", scaler.get_scale())
