"""Rotary position embedding on q and k: inv_freq from arange, outer with positions,
cat(freqs, freqs), cos/sin, rotate_half via chunk + cat."""

import torch
import torch.nn as nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, head_dim, base):
        super().__init__()
        self.head_dim = head_dim
        self.base = base

    def forward(self, q, k):
        seq = q.shape[2]
        even = torch.arange(0, self.head_dim, 2, device=q.device).float()
        inv_freq = 1.0 / (self.base ** (even / self.head_dim))
        t = torch.arange(seq, device=q.device).float()
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos()[None, None, :, :]
        sin = emb.sin()[None, None, :, :]
        q_out = q * cos + rotate_half(q) * sin
        k_out = k * cos + rotate_half(k) * sin
        return q_out, k_out


batch = 8
heads = 16
seq = 2048
head_dim = 128
base = 10000.0


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [head_dim, base]
