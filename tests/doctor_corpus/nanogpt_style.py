# expect:
# A nanoGPT-like loop: a tiny causal transformer with token and position embeddings,
# gradient accumulation (the loss divided by the micro-steps), clipping, AdamW, weight decay
# groups, a learning-rate schedule and zero_grad(set_to_none=True) after the step.
import math

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(1337)
vocab, block, width = 32, 8, 16
gradient_accumulation_steps = 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, block, block))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.c_attn(x).split(width, dim=2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(width)
        att = F.softmax(att.masked_fill(self.bias[:, :T, :T] == 0, float("-inf")), dim=-1)
        return self.c_proj(att @ v)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(block, width)
        self.blocks = nn.Sequential(Block(), Block())
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.size(1))
        x = self.blocks(self.wte(idx) + self.wpe(pos))
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        return logits, loss


data = torch.randint(0, vocab, (2000,))


def get_batch():
    ix = torch.randint(len(data) - block, (4,))
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
    return x, y


model = GPT()
decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                               {"params": no_decay, "weight_decay": 0.0}], lr=1e-3)


def get_lr(it, warmup=5, max_iters=24):
    if it < warmup:
        return 1e-3 * (it + 1) / warmup
    return 1e-4 + 0.5 * (1 + math.cos(math.pi * (it - warmup) / max_iters)) * 9e-4


X, Y = get_batch()
for iter_num in range(24):
    for group in optimizer.param_groups:
        group["lr"] = get_lr(iter_num)
    for micro_step in range(gradient_accumulation_steps):
        logits, loss = model(X, Y)
        loss = loss / gradient_accumulation_steps
        X, Y = get_batch()
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % 5 == 0:
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f}")
