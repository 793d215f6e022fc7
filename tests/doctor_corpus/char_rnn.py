# expect:
# A character-level LSTM with truncated backpropagation: the hidden state detached between
# batches, clipping before the step.
import torch
from torch import nn

torch.manual_seed(0)
text = torch.randint(0, 20, (2000,))


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 20)

    def forward(self, x, hidden):
        y, hidden = self.lstm(self.embed(x), hidden)
        return self.out(y), hidden


model = CharRNN()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
hidden = None
for step in range(20):
    chunk = text[step * 21:(step + 1) * 21].view(1, 21)
    if hidden is not None:
        hidden = tuple(h.detach() for h in hidden)
    logits, hidden = model(chunk[:, :-1], hidden)
    loss = nn.functional.cross_entropy(logits.view(-1, 20), chunk[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
