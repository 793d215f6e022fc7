# expect:
# A recurrent cell called once per time step, as the PyTorch name-classification tutorial
# does: many forward passes of one module, one backward pass through all of them.
import torch
from torch import nn

torch.manual_seed(0)
cell = nn.GRUCell(5, 12)
head = nn.Linear(12, 3)
params = [*cell.parameters(), *head.parameters()]
optimizer = torch.optim.SGD(params, lr=0.05)
sequences = torch.randn(20, 15, 1, 5)  # 20 sequences of 15 steps
labels = torch.randint(0, 3, (20, 1))
for sequence, label in zip(sequences, labels, strict=True):
    hidden = torch.zeros(1, 12)
    for step in sequence:
        hidden = cell(step, hidden)
    loss = nn.functional.cross_entropy(head(hidden), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
