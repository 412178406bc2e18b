"""A small transformer LM for the distributed tests: the example's model
(examples/transformer_step.py) at d_model 256, about 8 MB of parameters, so DDP's gradient
buckets (1 MiB first, then `bucket_cap_mb`) split it at torch's default (25 MB) and more at
2 MB. Dropout 0: the numerics compare the timed code (no second compile)."""

import torch
from torch import nn

VOCAB, D_MODEL, HEADS, LAYERS, BATCH, SEQ = 1000, 256, 4, 2, 8, 32


class TransformerLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        layer = nn.TransformerEncoderLayer(
            D_MODEL, HEADS, dim_feedforward=4 * D_MODEL, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def make_step(device="cpu"):
    model = TransformerLM().to(device)
    generator = torch.Generator().manual_seed(1234)
    data = torch.randint(0, VOCAB, (4, BATCH, SEQ + 1), generator=generator).to(device)
    criterion = nn.CrossEntropyLoss()

    def batch(i):
        chunk = data[i % 4]
        return chunk[:, :-1], chunk[:, 1:]

    def loss(model, inputs):
        tokens, targets = inputs
        return criterion(model(tokens).reshape(-1, VOCAB), targets.reshape(-1))

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
