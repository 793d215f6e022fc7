# expect: never-cleared
# zero_grad() forgotten in a loop that clips, as in the word_language_model example of
# pytorch/examples (clip_grad_norm_ before the step): clipping hides the growing sum from the
# step's norm, which stays at the bound; the sum before clipping keeps growing.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 6), torch.randn(32, 1)
for step in range(20):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()  # never-cleared here
