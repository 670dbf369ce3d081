"""SegFormer (MiT) encoder block: spatial-reduction self-attention and Mix-FFN over a feature
map."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads=2, sr_ratio=4, mlp_ratio=4):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        # keys/values come from a feature map shrunk by a strided conv (sr_ratio x sr_ratio)
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.sr_norm = nn.LayerNorm(dim, eps=1e-5)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        hidden = dim * mlp_ratio
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def attention(self, x, h, w):
        b, n, c = x.shape
        d = c // self.heads
        q = self.q(x).view(b, n, self.heads, d).permute(0, 2, 1, 3)
        x_map = x.transpose(1, 2).reshape(b, c, h, w)
        x_red = self.sr(x_map).flatten(2).transpose(1, 2)  # [B, N / sr^2, C]
        x_red = self.sr_norm(x_red)
        kv = self.kv(x_red).view(b, -1, 2, self.heads, d).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)

    def mix_ffn(self, x, h, w):
        b, n, _ = x.shape
        y = self.fc1(x)
        y = y.transpose(1, 2).view(b, -1, h, w)
        y = self.dwconv(y).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(y))

    def forward(self, feat):
        b, c, h, w = feat.shape
        x = feat.flatten(2).transpose(1, 2)  # [B, HW, C]
        x = x + self.attention(self.norm1(x), h, w)
        x = x + self.mix_ffn(self.norm2(x), h, w)
        return x.transpose(1, 2).reshape(b, c, h, w)


batch = 8
dim = 128
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, dim, height, width)]


def get_init_inputs():
    return [dim]
