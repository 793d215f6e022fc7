# expect:
# The loop of pytorch/examples' ImageNet script, small: conv + batch norm, SGD with momentum
# and weight decay, StepLR, bfloat16 autocast, validation under no_grad() every few steps and
# model.train() again after it.
import torch
import torch.nn.functional as F
from torch import nn


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))


def validate(model, images, target):
    model.eval()
    with torch.no_grad():
        acc = (model(images).argmax(1) == target).float().mean().item()
    print(f"acc {acc:.3f}")


def main():
    torch.manual_seed(0)
    model = make_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)
    images, target = torch.randn(32, 3, 16, 16), torch.randint(0, 5, (32,))
    for epoch in range(3):
        model.train()
        for i in range(0, 32, 8):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                output = model(images[i:i + 8])
                loss = criterion(output, target[i:i + 8])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        validate(model, images, target)
        scheduler.step()
    with torch.inference_mode():
        print(F.softmax(model(images[:1]), 1))


if __name__ == "__main__":
    main()
