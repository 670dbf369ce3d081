"""Causal self-attention with YaRN context extension (Peng et al.) in bf16: the per-frequency
blend between position interpolation and extrapolation is computed in forward from the
rotation count of each frequency over the original context (a clamped linear ramp between
alpha and beta), the attention temperature sqrt(1/t) = 0.1 ln(s) + 1 scales cos and sin, the
angles come from int64 position ids (a chunk starting late in the extended window), rotary
embedding by the rotate-half rule on a [B, H, L, D] transposed view, fp32 scores with a
triu causal mask and softmax, then the bf16 output projection."""

import math

import torch
import torch.nn as nn


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(nn.Module):
    def __init__(self, dim, heads, base, orig_ctx, scale, alpha, beta):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.base = base
        self.orig_ctx = orig_ctx
        self.scale = scale
        self.alpha = alpha
        self.beta = beta
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.to(torch.bfloat16)

    def yarn_inv_freq(self, device):
        d = self.head_dim
        exps = torch.arange(0, d, 2, device=device, dtype=torch.float32) / d
        inv_freq = self.base ** (-exps)
        rotations = self.orig_ctx * inv_freq / (2.0 * math.pi)
        ramp = ((rotations - self.alpha) / (self.beta - self.alpha)).clamp(0.0, 1.0)
        return (1.0 - ramp) * (inv_freq / self.scale) + ramp * inv_freq

    def forward(self, x, position_ids):
        # x: [B, L, dim] bf16; position_ids: [B, L] int64
        b, l, dim = x.shape  # noqa: E741
        qkv = self.qkv(x).view(b, l, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, L, D] each, non-contiguous
        inv_freq = self.yarn_inv_freq(x.device)
        angles = position_ids.float().unsqueeze(-1) * inv_freq  # [B, L, D/2]
        angles = torch.cat((angles, angles), dim=-1).unsqueeze(1)  # [B, 1, L, D]
        mscale = 0.1 * math.log(self.scale) + 1.0
        cos = (angles.cos() * mscale).to(x.dtype)
        sin = (angles.sin() * mscale).to(x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) / math.sqrt(self.head_dim)
        causal = torch.ones(l, l, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        att = torch.softmax(scores, dim=-1).to(x.dtype)
        out = torch.matmul(att, v).transpose(1, 2).reshape(b, l, dim)
        return self.proj(out)


batch = 2
seq_len = 1000
dim = 1024
heads = 8
start_pos = 14000


def get_inputs():
    x = torch.randn(batch, seq_len, dim).to(torch.bfloat16)
    starts = (start_pos - 4096 * (torch.arange(batch) % 2)).view(batch, 1)
    position_ids = starts + torch.arange(seq_len).view(1, seq_len)
    return [x, position_ids]


def get_init_inputs():
    return [dim, heads, 10000.0, 4096, 4.0, 1.0, 32.0]
