# expect:
# The WGAN-GP critic step of Gulrajani et al.'s improved training (as in caogang/wgan-gp and
# eriklindernoren/PyTorch-GAN's wgan_gp.py), small: the gradient penalty takes
# torch.autograd.grad of the critic's output at interpolated points with create_graph=True,
# a graph built on purpose for the critic's backward pass.
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizer_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))


def gradient_penalty(real, fake):
    alpha = torch.rand(real.size(0), 1)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(outputs=critic(x_hat), inputs=x_hat,
                                grad_outputs=torch.ones(real.size(0), 1),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for i in range(12):
    real = torch.randn(16, 2) * 0.5 + 2
    fake = generator(torch.randn(16, 4)).detach()
    optimizer_c.zero_grad()
    loss_c = critic(fake).mean() - critic(real).mean() + 10 * gradient_penalty(real, fake)
    loss_c.backward()
    optimizer_c.step()
    if i % 3 == 2:  # n_critic = 3
        optimizer_g.zero_grad()
        loss_g = -critic(generator(torch.randn(16, 4))).mean()
        loss_g.backward()
        optimizer_g.step()
