"""Causal SDPA on bf16 inputs, head dim 128 (a 16-bit program)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch, heads, seq, head_dim = 4, 16, 2048, 128


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
