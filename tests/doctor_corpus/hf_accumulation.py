# expect:
# The accumulation of Hugging Face's Trainer, written out: the loss divided by
# gradient_accumulation_steps, clipping, step, scheduler step and zero_grad() every k batches.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(8, 2)

    def forward(self, input_ids, labels):
        logits = self.classifier(self.dropout(self.embed(input_ids).mean(1)))
        return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}


torch.manual_seed(0)
gradient_accumulation_steps = 3
dataset = TensorDataset(torch.randint(0, 50, (96, 6)), torch.randint(0, 2, (96,)))
loader = DataLoader(dataset, batch_size=4, shuffle=True)
model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 - s / 100)
model.train()
model.zero_grad()
for epoch in range(3):
    for step, (input_ids, labels) in enumerate(loader):
        outputs = model(input_ids=input_ids, labels=labels)
        loss = outputs["loss"] / gradient_accumulation_steps
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            model.zero_grad()
