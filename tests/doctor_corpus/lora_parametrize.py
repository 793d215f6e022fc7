# expect:
# LoRA through torch.nn.utils.parametrize (as in the parametrizations tutorial of pytorch.org
# and minLoRA): a low-rank update registered on a frozen layer's weight. Registering it
# evaluates the parametrization once, with gradients on; only the LoRA factors train.
import torch
from torch import nn
from torch.nn.utils import parametrize


class LoRA(nn.Module):
    def __init__(self, fan_out, fan_in, rank=2, alpha=4):
        super().__init__()
        self.lora_A = nn.Parameter(torch.randn(rank, fan_in) * 0.1)
        self.lora_B = nn.Parameter(torch.zeros(fan_out, rank))
        self.scale = alpha / rank

    def forward(self, weight):
        return weight + self.lora_B @ self.lora_A * self.scale


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
model.requires_grad_(False)
for layer in (model[0], model[2]):
    parametrize.register_parametrization(layer, "weight", LoRA(*layer.weight.shape))
lora = [p for name, p in model.named_parameters() if "lora_" in name]
optimizer = torch.optim.AdamW(lora, lr=1e-2)
x, y = torch.randn(32, 6), torch.randint(0, 2, (32,))
for step in range(20):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
