"""nn.MultiheadAttention returning its head-averaged attention weights too (need_weights),
with a boolean causal mask."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x):
        s = x.shape[1]
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        out, weights = self.attn(x, x, x, attn_mask=mask, need_weights=True)
        return out, weights


batch, seq, dim, heads = 4, 256, 256, 4


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, heads]
