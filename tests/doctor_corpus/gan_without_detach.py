# expect: cleared-other
# A GAN whose discriminator loss reaches the generator (no detach()), and the generator's
# gradients are cleared only at the top: its step adds the discriminator's loss too.
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for step in range(10):
    real = torch.randn(16, 2) + 3
    opt_d.zero_grad()
    opt_g.zero_grad()
    fake = G(torch.randn(16, 2))
    loss_d = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    loss_d.backward()
    opt_d.step()
    loss_g = bce(D(G(torch.randn(16, 2))), torch.ones(16, 1))
    loss_g.backward()
    opt_g.step()
