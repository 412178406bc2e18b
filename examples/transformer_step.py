"""The seed article's transformer LM training step, made runnable.

The article passes integer tokens straight into `nn.Transformer`, which cannot run: a
Transformer takes embeddings. Here: token embedding → nn.TransformerEncoder → vocab head,
AdamW, cross-entropy on next-token targets.

Three sizes: `make_step` for the 2-core CPU demo, and for a GPU the two cases of
shared/reference/gpu-measurements.md: `make_step_gpu_small` (batch 16 × seq 32, d_model 512,
6 layers, fp32: launch-bound) and `make_step_gpu_big` (batch 32 × seq 512, d_model 1024,
8 layers; run it with `amp: bf16`: GPU-bound).

compilegate calls `make_step(device=...)`; nothing here imports compilegate.
"""

import torch
from torch import nn


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


def build(device, *, vocab=1000, d_model=64, heads=4, layers=2, batch=8, seq=32, dropout=0.1):
    model = TransformerLM(vocab, d_model, heads, layers, dropout).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(1234)
    data = torch.randint(0, vocab, (16, batch, seq + 1), generator=generator).to(device)

    def next_batch(i):
        chunk = data[i % data.shape[0]]
        return chunk[:, :-1], chunk[:, 1:]

    def loss(model, inputs):
        tokens, targets = inputs
        logits = model(tokens)
        return criterion(logits.reshape(-1, vocab), targets.reshape(-1))

    return {"model": model, "optimizer": optimizer, "batch": next_batch, "loss": loss}


def make_step(device="cpu"):
    return build(device)


def make_step_gpu_small(device="cuda"):
    return build(device, d_model=512, heads=8, layers=6, batch=16, seq=32)


def make_step_gpu_big(device="cuda"):
    return build(device, d_model=1024, heads=8, layers=8, batch=32, seq=512)
