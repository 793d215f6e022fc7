# expect:
# Neural style transfer as in pytorch/tutorials' neural_style_tutorial (and pytorch/examples'
# fast_neural_style loss network), small: a frozen feature network in eval mode, the input
# image itself optimized; gradients reach the image through the network, none of its weights.
import torch
from torch import nn

torch.manual_seed(0)
features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Dropout(0.1),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()).eval()
features.requires_grad_(False)


def gram(x):
    b, c, h, w = x.shape
    f = x.reshape(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


content_img, style_img = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
with torch.no_grad():
    content_target, style_target = features(content_img), gram(features(style_img))
input_img = content_img.clone().requires_grad_(True)
optimizer = torch.optim.Adam([input_img], lr=0.02)
for step in range(20):
    optimizer.zero_grad()
    out = features(input_img)
    loss = nn.functional.mse_loss(out, content_target) + 1e3 * nn.functional.mse_loss(
        gram(out), style_target)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        input_img.clamp_(0, 1)
