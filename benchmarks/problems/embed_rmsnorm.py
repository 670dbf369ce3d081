"""A decoder's first step: token embedding lookup, then the first layer's RMSNorm (weight
times x / rms(x)), in fp32."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, hidden, eps):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, ids):
        h = self.embed(ids)
        rms = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * (h * rms)


vocab = 32000
batch = 16
seq = 2048
hidden = 4096
eps = 1e-6


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq))]


def get_init_inputs():
    return [vocab, hidden, eps]
