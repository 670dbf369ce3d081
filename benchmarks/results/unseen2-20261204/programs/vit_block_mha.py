"""Pre-norm ViT encoder block with nn.MultiheadAttention (batch_first) and a GELU MLP."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.n1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.n2(x))


batch, tokens, dim, heads = 16, 197, 384, 6


def get_inputs():
    return [torch.randn(batch, tokens, dim)]


def get_init_inputs():
    return [dim, heads]
