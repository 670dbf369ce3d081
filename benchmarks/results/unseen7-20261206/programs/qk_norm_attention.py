"""OLMo-2 / Qwen3-style self-attention with QK-norm: a fused qkv projection, per-head RMSNorm
(F.rms_norm with learned weights) on queries and keys before causal scaled-dot-product
attention, and the output projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, heads, head_dim):
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        dim = heads * head_dim
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q_norm = nn.Parameter(torch.linspace(0.5, 1.5, head_dim))
        self.k_norm = nn.Parameter(torch.linspace(1.5, 0.5, head_dim))
        self.o_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [B, H, S, D]
        q = F.rms_norm(q, (self.head_dim,), self.q_norm, eps=1e-6)
        k = F.rms_norm(k, (self.head_dim,), self.k_norm, eps=1e-6)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, -1))


batch = 4
seq = 2048
heads = 8
head_dim = 128


def get_inputs():
    return [torch.randn(batch, seq, heads * head_dim)]


def get_init_inputs():
    return [heads, head_dim]
