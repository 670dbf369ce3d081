"""Llama-style attention: rotary embedding on q and k, grouped KV heads expanded with
repeat_interleave, causal SDPA."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, heads, kv_heads, head_dim, max_seq):
        super().__init__()
        self.rep = heads // kv_heads
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        t = torch.arange(max_seq).float()
        freqs = torch.outer(t, inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    @staticmethod
    def rot(x):
        a, b = x.chunk(2, dim=-1)
        return torch.cat([-b, a], dim=-1)

    def forward(self, q, k, v):
        s = q.shape[2]
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + self.rot(q) * sin
        k = k * cos + self.rot(k) * sin
        k = k.repeat_interleave(self.rep, dim=1)
        v = v.repeat_interleave(self.rep, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch, heads, kv_heads, seq, head_dim = 4, 16, 4, 1024, 64


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim), torch.randn(batch, kv_heads, seq, head_dim),
            torch.randn(batch, kv_heads, seq, head_dim)]


def get_init_inputs():
    return [heads, kv_heads, head_dim, seq]
