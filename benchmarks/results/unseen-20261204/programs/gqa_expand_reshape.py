"""GQA as HF writes repeat_kv: expand a new head-group dim, reshape, then causal SDPA."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_rep):
        super().__init__()
        self.n_rep = n_rep

    def repeat_kv(self, x):
        b, h, s, d = x.shape
        return x[:, :, None, :, :].expand(b, h, self.n_rep, s, d).reshape(b, h * self.n_rep, s, d)

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, self.repeat_kv(k), self.repeat_kv(v),
                                              is_causal=True)


batch, kv_heads, n_rep, seq, head_dim = 2, 4, 4, 1024, 128


def get_inputs():
    return [torch.randn(batch, kv_heads * n_rep, seq, head_dim),
            torch.randn(batch, kv_heads, seq, head_dim),
            torch.randn(batch, kv_heads, seq, head_dim)]


def get_init_inputs():
    return [n_rep]
