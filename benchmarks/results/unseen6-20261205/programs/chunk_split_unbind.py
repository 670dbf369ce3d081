"""A gated attention block: one projection chunked into query, key and gate; the key's
channels rotated by an uneven split, the query's halves swapped; the value is the key gated
by sigmoid(gate); scores get a learned positional bias through baddbmm."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_model, dim, seq):
        super().__init__()
        self.proj = nn.Linear(d_model, 3 * dim)
        self.pos_bias = nn.Parameter(torch.zeros(seq, seq))
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, g = self.proj(x).chunk(3, dim=-1)
        dim = k.shape[-1]
        k_lo, k_hi = torch.split(k, [dim // 4, dim - dim // 4], dim=-1)
        k = torch.cat([k_hi, k_lo], dim=-1)
        q_a, q_b = q.unflatten(-1, (2, dim // 2)).unbind(dim=-2)
        q = torch.cat((q_b, q_a), dim=-1)
        v = k * torch.sigmoid(g)
        scores = torch.baddbmm(self.pos_bias, q, k.transpose(1, 2), alpha=self.scale)
        return scores.softmax(dim=-1) @ v


batch, seq, d_model, dim = 32, 1024, 512, 256


def get_inputs():
    return [torch.randn(batch, seq, d_model)]


def get_init_inputs():
    return [d_model, dim, seq]
