"""Linformer encoder layer (pre-norm): self-attention whose keys and values are first
compressed along the sequence axis by learned [n, k] projections shared across heads
(einsum 'bnd,nk->bkd'), heads split by view/transpose, softmax over the k projected
positions, merged heads and output projection; then a GELU feed-forward block; residuals
around both."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LinformerSelfAttention(nn.Module):
    def __init__(self, dim, seq_len, k, heads):
        super().__init__()
        self.heads, self.dim_head = heads, dim // heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        bound = 1 / math.sqrt(k)
        self.proj_k = nn.Parameter(torch.empty(seq_len, k).uniform_(-bound, bound))
        self.proj_v = nn.Parameter(torch.empty(seq_len, k).uniform_(-bound, bound))
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        h, dh = self.heads, self.dim_head
        q = self.to_q(x)
        keys = torch.einsum("bnd,nk->bkd", self.to_k(x), self.proj_k)
        values = torch.einsum("bnd,nk->bkd", self.to_v(x), self.proj_v)
        q = q.view(b, n, h, dh).transpose(1, 2)  # [b, h, n, dh]
        keys = keys.view(b, -1, h, dh).transpose(1, 2)  # [b, h, k, dh]
        values = values.view(b, -1, h, dh).transpose(1, 2)
        dots = torch.matmul(q, keys.transpose(-1, -2)) * dh ** -0.5
        attn = dots.softmax(dim=-1)
        out = torch.matmul(attn, values)  # [b, h, n, dh]
        out = out.transpose(1, 2).reshape(b, n, d)
        return self.to_out(out)


class Model(nn.Module):
    def __init__(self, dim, seq_len, k, heads, ff_mult=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = LinformerSelfAttention(dim, seq_len, k, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, dim * ff_mult)
        self.ff2 = nn.Linear(dim * ff_mult, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ff2(F.gelu(self.ff1(self.norm2(x))))
        return x


batch = 8
seq_len = 2048
dim = 512
proj_k = 256
heads = 8


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, seq_len, proj_k, heads]
