# expect:
# A student trained against a frozen teacher (run under no_grad()) and an exponential moving
# average of the student's weights, updated under no_grad() after each step.
import copy

import torch
from torch import nn

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).eval()
student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
ema = copy.deepcopy(student).requires_grad_(False)
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
for step in range(20):
    x = torch.randn(32, 4)
    with torch.no_grad():
        soft = teacher(x).softmax(1)
    loss = nn.functional.cross_entropy(student(x), soft)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for e, s in zip(ema.parameters(), student.parameters(), strict=True):
            e.lerp_(s, 0.01)
