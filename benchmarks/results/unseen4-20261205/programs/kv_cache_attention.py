"""Decoder attention with a KV cache: new keys and values concatenated to the cached ones
along the sequence, then SDPA for the new queries (no mask: all cached keys are past)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_new, v_new, k_cache, v_cache):
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        return F.scaled_dot_product_attention(q, k, v)


batch, heads, new, past, head_dim = 8, 16, 16, 2032, 64


def get_inputs():
    return [torch.randn(batch, heads, new, head_dim), torch.randn(batch, heads, new, head_dim),
            torch.randn(batch, heads, new, head_dim), torch.randn(batch, heads, past, head_dim),
            torch.randn(batch, heads, past, head_dim)]


def get_init_inputs():
    return []
