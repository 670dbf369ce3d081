"""Swin window attention: partition [B, H, W, C] into 7x7 windows, multi-head attention
with a learned relative-position bias table gathered by a fixed index, merge back."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads, window):
        super().__init__()
        self.heads, self.window = heads, window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.02)
        c = torch.stack(
            torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")
        ).flatten(1)
        rel = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("index", rel[..., 0] * (2 * window - 1) + rel[..., 1])

    def forward(self, x):
        B, H, W, C = x.shape
        w, h = self.window, self.heads
        x = x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        n = x.shape[1]
        qkv = self.qkv(x).reshape(-1, n, 3, h, C // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * (C // h) ** -0.5) @ k.transpose(-2, -1)
        bias = self.table[self.index.view(-1)].view(n, n, h).permute(2, 0, 1)
        attn = (attn + bias.unsqueeze(0)).softmax(-1)
        out = (attn @ v).transpose(1, 2).reshape(-1, n, C)
        out = self.proj(out).view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5)
        return out.reshape(B, H, W, C)


batch, size, dim, heads, window = 8, 56, 96, 3, 7


def get_inputs():
    return [torch.randn(batch, size, size, dim)]


def get_init_inputs():
    return [dim, heads, window]
