# expect:
# unsure: not-in-optimizer
# A model with an auxiliary head and an adapter, both switched off for this run on purpose
# (torchvision's GoogLeNet aux_logits style): the head is never called, the adapter frozen
# after the optimizer was built. The optimizer holds model.parameters(), as usual.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, aux_logits=False, use_adapter=False):
        super().__init__()
        self.aux_logits = aux_logits
        self.use_adapter = use_adapter
        self.body = nn.Linear(6, 16)
        self.adapter = nn.Linear(16, 16)
        self.aux = nn.Linear(16, 3)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        if self.use_adapter:
            h = h + self.adapter(h)
        out = self.head(h)
        if self.training and self.aux_logits:
            return out, self.aux(h)
        return out


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.adapter.requires_grad_(False)
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
for step in range(20):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
