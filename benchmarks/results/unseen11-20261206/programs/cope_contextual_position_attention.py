"""Contextual Position Encoding (CoPE, Golovneva et al. 2024) in causal multi-head
attention: gates sigmoid(q.k) under a lower-triangular mask built in forward, positions
as the reverse cumulative sum of the gates (flip, cumsum, flip) clamped to the table size,
and position logits q.e[p] interpolated between floor and ceil with torch.gather."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads, npos_max):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.npos_max = npos_max
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.pos_emb = nn.Parameter(torch.randn(self.head_dim, npos_max) * 0.1)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        logits = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))

        gates = torch.sigmoid(logits).masked_fill(~causal, 0.0)
        pos = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=self.npos_max - 1)
        pos_floor = pos.floor()
        frac = pos - pos_floor
        pos_logits = torch.matmul(q, self.pos_emb)  # [b, h, t, npos_max]
        lo = torch.gather(pos_logits, -1, pos_floor.long())
        hi = torch.gather(pos_logits, -1, pos.ceil().long())
        logits = logits + lo * (1 - frac) + hi * frac

        attn = torch.softmax(logits.masked_fill(~causal, float("-inf")), dim=-1)
        y = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


batch = 4
seq_len = 512
dim = 512
heads = 8
npos_max = 64


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, npos_max]
