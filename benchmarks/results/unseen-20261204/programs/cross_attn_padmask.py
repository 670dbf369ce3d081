"""Cross-attention: queries from a decoder, keys and values from an encoder of another
length, a [B, 1, 1, N] boolean key mask, SDPA with dropout off."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, key_mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask[:, None, None, :],
                                              dropout_p=0.0)


batch, heads, m, n, head_dim = 8, 12, 384, 1024, 64


def get_inputs():
    lens = torch.randint(n // 2, n + 1, (batch,))
    key_mask = torch.arange(n)[None, :] < lens[:, None]
    return [torch.randn(batch, heads, m, head_dim), torch.randn(batch, heads, n, head_dim),
            torch.randn(batch, heads, n, head_dim), key_mask]


def get_init_inputs():
    return []
