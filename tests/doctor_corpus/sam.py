# expect:
# Sharpness-aware minimization as in davda54/sam: SAM wraps a base optimizer and shares its
# parameter groups; first_step() climbs to the worst nearby weights, second_step() goes back
# and steps the base optimizer. Two forward/backward passes per step; SAM.step() never runs.
import torch
from torch import nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for group in self.param_groups
                                            for p in group["params"] if p.grad is not None]))
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                p.add_(p.grad * scale)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
for step in range(20):
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.first_step(zero_grad=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.second_step(zero_grad=True)
