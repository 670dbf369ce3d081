"""GPT-J style rotary embedding on part of each head: sin/cos tables from integer position
ids for the first rotary_dim = head_dim * rotary_pct channels, interleaved rotation
(rotate_every_two: pairs (x0, x1) -> (-x1, x0) via stack + flatten) with repeat_interleave'd
sin/cos, the remaining channels passed through and concatenated back."""

import torch
import torch.nn as nn


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class Model(nn.Module):
    def __init__(self, head_dim, rotary_pct, base):
        super().__init__()
        self.rotary_dim = max(2, int(head_dim * rotary_pct) // 2 * 2)
        even = torch.arange(0, self.rotary_dim, 2, dtype=torch.float32)
        self.register_buffer("inv_freq", 1.0 / (base ** (even / self.rotary_dim)))

    def apply(self, t, sin, cos):
        rot, rest = t[..., : self.rotary_dim], t[..., self.rotary_dim:]
        rot = rot * cos + rotate_every_two(rot) * sin
        return torch.cat([rot, rest], dim=-1)

    def forward(self, q, k, position_ids):
        # q, k: [B, S, H, D] (GPT-J keeps heads after the sequence), position_ids: [B, S]
        angles = position_ids[..., None].float() * self.inv_freq  # [B, S, R/2]
        sin = torch.repeat_interleave(angles.sin(), 2, dim=-1)[:, :, None, :]
        cos = torch.repeat_interleave(angles.cos(), 2, dim=-1)[:, :, None, :]
        return self.apply(q, sin, cos), self.apply(k, sin, cos)


batch = 8
seq = 2048
heads = 12
head_dim = 256


def get_inputs():
    q = torch.randn(batch, seq, heads, head_dim)
    k = torch.randn(batch, seq, heads, head_dim)
    offsets = torch.randint(0, 512, (batch, 1))
    position_ids = torch.arange(seq)[None, :] + offsets
    return [q, k, position_ids]


def get_init_inputs():
    return [head_dim, 0.25, 10000.0]
