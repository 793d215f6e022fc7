# expect:
# The DCGAN loop of pytorch/examples, small: netD.zero_grad(), the fake batch detached for the
# discriminator's step, netG.zero_grad() before the generator's.
import torch
from torch import nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
netD = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0
for i in range(12):
    real = torch.randn(16, 2) * 0.5 + 2
    netD.zero_grad()
    label = torch.full((16, 1), real_label)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(torch.randn(16, 4))
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(real_label)
    errG = criterion(netD(fake), label)
    errG.backward()
    optimizerG.step()
