"""The seed article's transformer LM training step, made runnable.

The article passes integer tokens straight into `nn.Transformer`, which cannot run: a
Transformer takes embeddings. Here: token embedding → nn.TransformerEncoder → vocab head,
AdamW, cross-entropy on next-token targets. Sizes come from the environment so the same
file serves the 2-core CPU demo and a GPU run.

compilegate calls `make_step(device=...)`; nothing here imports compilegate.
"""

import os

import torch
from torch import nn

VOCAB = int(os.environ.get("EXAMPLE_VOCAB", 1000))
D_MODEL = int(os.environ.get("EXAMPLE_D_MODEL", 64))
HEADS = int(os.environ.get("EXAMPLE_HEADS", 4))
LAYERS = int(os.environ.get("EXAMPLE_LAYERS", 2))
BATCH = int(os.environ.get("EXAMPLE_BATCH", 8))
SEQ = int(os.environ.get("EXAMPLE_SEQ", 32))
DROPOUT = float(os.environ.get("EXAMPLE_DROPOUT", 0.1))


class TransformerLM(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=4 * d_model, dropout=dropout, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def make_step(device="cpu"):
    model = TransformerLM(VOCAB, D_MODEL, HEADS, LAYERS, DROPOUT).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(1234)
    data = torch.randint(0, VOCAB, (16, BATCH, SEQ + 1), generator=generator).to(device)

    def batch(i):
        chunk = data[i % data.shape[0]]
        return chunk[:, :-1], chunk[:, 1:]

    def loss(model, inputs):
        tokens, targets = inputs
        logits = model(tokens)
        return criterion(logits.reshape(-1, VOCAB), targets.reshape(-1))

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
