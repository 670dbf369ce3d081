"""Attention over packed pretraining sequences: several documents share one row, and a
token may attend only to earlier tokens of its own document. The mask is built from the
given segment ids (seg[:, :, None] == seg[:, None, :]) and a causal tril, fed as a boolean
attn_mask to scaled_dot_product_attention; rotary embeddings use positions that restart
at every document boundary (computed with cummax over boundary indices)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x, segment_ids):
        b, t, c = x.shape
        idx = torch.arange(t, device=x.device).expand(b, t)
        start = torch.ones_like(segment_ids, dtype=torch.bool)
        start[:, 1:] = segment_ids[:, 1:] != segment_ids[:, :-1]
        doc_start = torch.where(start, idx, torch.zeros_like(idx)).cummax(dim=1).values
        pos = (idx - doc_start).to(x.dtype)  # position inside the document
        freqs = pos[..., None] * self.inv_freq
        emb = torch.cat([freqs, freqs], dim=-1)[:, None]  # [b, 1, t, d]
        cos, sin = emb.cos(), emb.sin()

        q, k, v = self.wqkv(self.norm(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin

        same = segment_ids[:, :, None] == segment_ids[:, None, :]
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        mask = (same & causal)[:, None]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return x + self.wo(o.transpose(1, 2).reshape(b, t, c))


batch = 16
seq_len = 2048
dim = 1024
heads = 16


def get_inputs():
    x = torch.randn(batch, seq_len, dim)
    starts = torch.rand(batch, seq_len) < 4.0 / seq_len * 3  # ~12 documents per row
    starts[:, 0] = True
    segment_ids = starts.long().cumsum(dim=1) - 1
    return [x, segment_ids]


def get_init_inputs():
    return [dim, heads]
