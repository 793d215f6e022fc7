# expect:
# StyleGAN2's lazy R1 regularization (rosinality/stylegan2-pytorch, d_r1_loss), small: every
# other step the discriminator's output on real images is differentiated with respect to them
# (torch.autograd.grad, create_graph=True) and the penalty gets a backward pass of its own,
# which goes through the gradient's graph, not the output's. Each network's requires_grad is
# switched off while the other one trains, as there.
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
g_optim = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99))


def requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad = flag


def d_r1_loss(real_pred, real_img):
    (grad_real,) = torch.autograd.grad(outputs=real_pred.sum(), inputs=real_img,
                                       create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


for i in range(12):
    real_img = torch.randn(16, 2) * 0.5 + 2
    requires_grad(generator, False)
    requires_grad(discriminator, True)
    fake_img = generator(torch.randn(16, 4))
    d_loss = (F.softplus(discriminator(fake_img)).mean()
              + F.softplus(-discriminator(real_img)).mean())
    discriminator.zero_grad()
    d_loss.backward()
    d_optim.step()
    if i % 2 == 0:  # d_reg_every
        real_img.requires_grad = True
        r1_loss = d_r1_loss(discriminator(real_img), real_img)
        discriminator.zero_grad()
        (10 / 2 * r1_loss * 2).backward()
        d_optim.step()
    requires_grad(generator, True)
    requires_grad(discriminator, False)
    g_loss = F.softplus(-discriminator(generator(torch.randn(16, 4)))).mean()
    generator.zero_grad()
    g_loss.backward()
    g_optim.step()
