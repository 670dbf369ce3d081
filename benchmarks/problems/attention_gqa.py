"""Grouped-query attention: 32 query heads share 8 K/V heads via repeat_interleave, then
causal SDPA."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_rep):
        super().__init__()
        self.n_rep = n_rep

    def forward(self, q, k, v):
        k = torch.repeat_interleave(k, self.n_rep, dim=1)
        v = torch.repeat_interleave(v, self.n_rep, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch = 1
kv_heads = 8
n_rep = 4  # query heads per K/V head (a constant, as kv_heads: never reduced)
q_heads = kv_heads * n_rep
seq = 2048
head_dim = 64


def get_inputs():
    return [
        torch.randn(batch, q_heads, seq, head_dim),
        torch.randn(batch, kv_heads, seq, head_dim),
        torch.randn(batch, kv_heads, seq, head_dim),
    ]


def get_init_inputs():
    return [n_rep]
