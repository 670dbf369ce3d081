"""nn.Embedding with max_norm: looked-up rows whose norm exceeds it are renormalised in the
weight itself (an in-place update of the parameter), then mean over the sequence."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, max_norm=1.0)

    def forward(self, ids):
        return self.emb(ids).mean(dim=1)


vocab, dim, batch, seq = 10000, 128, 64, 64


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq))]


def get_init_inputs():
    return [vocab, dim]
