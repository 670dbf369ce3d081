"""Differential Transformer attention (Ye et al. 2024): queries and keys with two halves per
head, two causal softmax maps subtracted with a re-parameterised
lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, applied to values of width 2d,
a per-head RMSNorm, the (1 - lambda_init) scale, and the output projection."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, heads, head_dim, depth):
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        dim = 2 * heads * head_dim
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * (depth - 1))
        steps = torch.linspace(-0.1, 0.1, head_dim)
        self.lq1 = nn.Parameter(steps.clone())
        self.lk1 = nn.Parameter(steps.flip(0))
        self.lq2 = nn.Parameter(steps * 0.5)
        self.lk2 = nn.Parameter(steps.flip(0) * 0.5)
        self.norm_weight = nn.Parameter(torch.ones(2 * head_dim))

    def forward(self, x):
        b, s, _ = x.shape
        h, d = self.heads, self.head_dim
        q = self.wq(x).view(b, s, 2 * h, d).transpose(1, 2)
        k = self.wk(x).view(b, s, 2 * h, d).transpose(1, 2)
        v = self.wv(x).view(b, s, h, 2 * d).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) * d ** -0.5
        mask = torch.triu(torch.full((s, s), float("-inf"), device=x.device), diagonal=1)
        attn = torch.softmax(scores + mask, dim=-1).view(b, h, 2, s, s)
        lam = (torch.exp(torch.sum(self.lq1 * self.lk1)) - torch.exp(torch.sum(self.lq2 * self.lk2))
               + self.lambda_init)
        attn = attn[:, :, 0] - lam * attn[:, :, 1]
        o = torch.matmul(attn, v)  # [B, H, S, 2d]
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-5) * self.norm_weight
        o = o * (1 - self.lambda_init)
        return self.wo(o.transpose(1, 2).reshape(b, s, -1))


batch = 4
seq = 1024
heads = 8
head_dim = 64


def get_inputs():
    return [torch.randn(batch, seq, 2 * heads * head_dim)]


def get_init_inputs():
    return [heads, head_dim, 4]
