# expect:
# A model whose validation shares a module with training (a Siamese encoder, as in
# pytorch/examples' siamese_network): training runs the encoder in train mode on pairs;
# validation, under no_grad() in eval mode, embeds with the same encoder; a frozen teacher
# with dropout, kept in eval mode, shares the encoder's embedding and is trained through it.
import torch
from torch import nn

torch.manual_seed(0)
embedding = nn.Embedding(20, 8)
encoder = nn.Sequential(embedding, nn.Flatten(), nn.Linear(24, 16), nn.Dropout(0.2),
                        nn.ReLU(), nn.Linear(16, 8))
teacher = nn.Sequential(embedding, nn.Flatten(), nn.Linear(24, 8), nn.Dropout(0.2))
for p in teacher[2].parameters():
    p.requires_grad = False
teacher.eval()
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
x1, x2 = torch.randint(0, 20, (32, 3)), torch.randint(0, 20, (32, 3))
same = torch.randint(0, 2, (32,)).float()
for epoch in range(5):
    encoder.train()
    for i in range(0, 32, 8):
        optimizer.zero_grad()
        a, b = encoder(x1[i:i + 8]), encoder(x2[i:i + 8])
        distance = (a - b).pow(2).sum(1)
        loss = (same[i:i + 8] * distance + (1 - same[i:i + 8]) * (1 - distance).clamp_min(0)
                ).mean() + nn.functional.mse_loss(a, teacher(x1[i:i + 8]))
        loss.backward()
        optimizer.step()
    encoder.eval()
    with torch.no_grad():
        print("validation distance", (encoder(x1) - encoder(x2)).pow(2).sum(1).mean().item())
