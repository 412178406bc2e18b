"""A Hugging Face GPT-2 language-model step: a tiny config, random weights, no download.

Labels are passed, so the model computes its own loss; with transformers 5.x that goes
through `PreTrainedModel.loss_function`, whose `logger.warning_once` (the config has no
`loss_type`) is a graph break inside installed code, inlined from GPT-2's `forward`. torch
compiles four frames on the way to it, and `torch._dynamo.explain` counts one break:
compilegate must report one site, in the library, with its cause. Needs `transformers`
(the `test` extra; 5.x needs torch >= 2.6). No compilegate import.
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB, CONTEXT, BATCHES = 100, 16, 4


def make_step(device="cpu"):
    config = GPT2Config(
        n_layer=1,
        n_embd=32,
        n_head=2,
        vocab_size=VOCAB,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = GPT2LMHeadModel(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(11)
    tokens = torch.randint(0, VOCAB, (BATCHES, 4, CONTEXT), generator=generator).to(device)

    def batch(i):
        return tokens[i % BATCHES]

    def loss(model, input_ids):
        return model(input_ids=input_ids, labels=input_ids).loss

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
