"""Hand-written causal attention, GPT-2 style: q @ k^T * scale, a lower-triangular mask kept
as a registered buffer (masked_fill where it is 0), softmax, then @ v; head_dim 128."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, max_seq):
        super().__init__()
        tril = torch.tril(torch.ones(max_seq, max_seq))
        self.register_buffer("mask", tril.view(1, 1, max_seq, max_seq))

    def forward(self, q, k, v):
        t = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        return att @ v


batch = 8
heads = 8
seq = 1024
head_dim = 128


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [seq]
