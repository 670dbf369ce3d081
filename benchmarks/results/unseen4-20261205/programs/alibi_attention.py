"""Attention with ALiBi: a per-head slope times the key-query distance added to the scores
(built in forward), a causal mask, softmax, then the values (explicit matmuls)."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)])
        self.register_buffer("slopes", slopes)

    def forward(self, q, k, v):
        s = q.shape[2]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        pos = torch.arange(s, device=q.device)
        dist = (pos[None, :] - pos[:, None]).float()
        scores = scores + self.slopes[:, None, None] * dist
        causal = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


batch, heads, seq, head_dim = 4, 16, 1024, 64


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim) for _ in range(3)]


def get_init_inputs():
    return [heads]
