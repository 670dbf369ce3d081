"""Token embedding plus learned positional embedding, scaled by sqrt(hidden) (the input
stage of a transformer language model)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, seq, hidden):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.scale = hidden ** 0.5

    def forward(self, ids):
        return self.tok(ids) * self.scale + self.pos


vocab = 32768
batch = 32
seq = 1024
hidden = 2048


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq))]


def get_init_inputs():
    return [vocab, seq, hidden]
