"""ALiBi attention: q @ k^T scaled, plus a per-head linear distance bias (geometric slopes
times key - query offset), causal masked_fill, softmax, @ v."""

import math

import torch
import torch.nn as nn


def alibi_slopes(n_heads):
    start = 2.0 ** (-8.0 / n_heads)
    return torch.tensor([start ** (i + 1) for i in range(n_heads)])


class Model(nn.Module):
    def __init__(self, n_heads):
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(n_heads).view(1, n_heads, 1, 1))

    def forward(self, q, k, v):
        t = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        pos = torch.arange(t, device=q.device)
        rel = (pos[None, :] - pos[:, None]).to(q.dtype)
        scores = scores + self.slopes * rel
        causal = pos[None, :] > pos[:, None]
        scores = scores.masked_fill(causal, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


batch = 2
n_heads = 8  # below 16: a constant, not a size
seq = 2048
head_dim = 64


def get_inputs():
    shape = (batch, n_heads, seq, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [n_heads]
