"""Length-extrapolatable Transformer (xPos) causal self-attention: pre-LayerNorm, rotary
embedding on interleaved pairs (rotate-every-two via strided slices, stack and flatten,
sin/cos duplicated by repeat_interleave) with xPos's exponential per-frequency scale
zeta^(n / 512) over centred positions, multiplied into queries and divided out of keys,
then causal F.scaled_dot_product_attention and the output projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class Model(nn.Module):
    def __init__(self, dim, heads, scale_base):
        super().__init__()
        self.heads, self.scale_base = heads, scale_base
        hd = dim // heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.register_buffer("zeta", (torch.arange(0, hd, 2) + 0.4 * hd) / (1.4 * hd))
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, hd, 2) / hd))

    def xpos(self, x, sin, cos, scale):
        return (x * cos * scale) + (rotate_every_two(x) * sin * scale)

    def forward(self, x):  # [B, L, D]
        B, L, D = x.shape
        h = self.heads
        y = self.norm(x)
        q, k, v = self.qkv(y).view(B, L, 3, h, D // h).permute(2, 0, 3, 1, 4).unbind(0)
        pos = torch.arange(L, device=x.device, dtype=x.dtype)
        centred = pos - L // 2
        scale = self.zeta.unsqueeze(0) ** (centred.unsqueeze(1) / self.scale_base)  # [L, hd/2]
        angles = pos.unsqueeze(1) * self.inv_freq.unsqueeze(0)
        sin = torch.repeat_interleave(angles.sin(), 2, dim=-1)
        cos = torch.repeat_interleave(angles.cos(), 2, dim=-1)
        scale = torch.repeat_interleave(scale, 2, dim=-1)
        q = self.xpos(q, sin, cos, scale)
        k = self.xpos(k, sin, cos, 1.0 / scale)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(att.transpose(1, 2).reshape(B, L, D))


batch = 4
seq_len = 2048
heads = 8
head_dim = 128
scale_base = 512


def get_inputs():
    return [torch.randn(batch, seq_len, heads * head_dim)]


def get_init_inputs():
    return [heads * head_dim, heads, scale_base]
