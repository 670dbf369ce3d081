"""Swin Transformer V2 shifted-window attention block: torch.roll cyclic shift, window
partition, scaled cosine attention with a clamped, exponentiated per-head logit scale, a
continuous relative position bias from a small MLP over log-spaced coordinates (16 * sigmoid),
the shifted-window region mask, reverse shift and Swin-V2's residual post-norm."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, size, dim, heads, window, cpb_hidden):
        super().__init__()
        self.heads, self.window = heads, window
        self.shift = window // 2 if size > window else 0
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q_bias = nn.Parameter(torch.randn(dim) * 0.02)
        self.v_bias = nn.Parameter(torch.randn(dim) * 0.02)
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones(heads, 1, 1)))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, cpb_hidden), nn.ReLU(inplace=True),
                                     nn.Linear(cpb_hidden, heads, bias=False))
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

        # log-spaced relative coordinates, (2w-1) x (2w-1) x 2, normalised to [-8, 8]
        r = torch.arange(-(window - 1), window, dtype=torch.float32)
        table = torch.stack(torch.meshgrid(r, r, indexing="ij"), dim=-1) / (window - 1) * 8
        table = torch.sign(table) * torch.log2(table.abs() + 1.0) / math.log2(8)
        self.register_buffer("coords_table", table.unsqueeze(0), persistent=False)
        c = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window),
                                       indexing="ij")).flatten(1)
        rel = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("rel_index", rel[..., 0] * (2 * window - 1) + rel[..., 1],
                             persistent=False)

        # region ids of the shifted image: pairs from different regions get -100
        n = window * window
        if self.shift > 0:
            img = torch.zeros(size, size)
            cuts = (slice(0, -window), slice(-window, -self.shift), slice(-self.shift, None))
            cnt = 0
            for hs in cuts:
                for ws in cuts:
                    img[hs, ws] = cnt
                    cnt += 1
            wins = img.view(size // window, window, size // window, window)
            wins = wins.permute(0, 2, 1, 3).reshape(-1, n)
            mask = wins[:, None, :] - wins[:, :, None]
            mask = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
        else:
            mask = torch.zeros((size // window) ** 2, n, n)
        self.register_buffer("attn_mask", mask, persistent=False)

    def forward(self, x):  # [B, H, W, C]
        B, H, W, C = x.shape
        w, h = self.window, self.heads
        n = w * w
        shortcut = x
        if self.shift > 0:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        x = x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, n, C)
        bias = torch.cat((self.q_bias, torch.zeros_like(self.v_bias), self.v_bias))
        qkv = F.linear(x, self.qkv.weight, bias).reshape(-1, n, 3, h, C // h)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        scale = torch.clamp(self.logit_scale, max=math.log(100.0)).exp()
        attn = attn * scale
        table = self.cpb_mlp(self.coords_table).view(-1, h)
        rpb = table[self.rel_index.view(-1)].view(n, n, h).permute(2, 0, 1)
        attn = attn + 16 * torch.sigmoid(rpb).unsqueeze(0)
        nw = self.attn_mask.shape[0]
        attn = attn.view(B, nw, h, n, n) + self.attn_mask[None, :, None]
        attn = attn.view(-1, h, n, n).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(-1, n, C)
        out = self.proj(out)
        out = out.view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        if self.shift > 0:
            out = torch.roll(out, shifts=(self.shift, self.shift), dims=(1, 2))
        return shortcut + self.norm(out)


batch = 32
size = 64
heads = 4
head_dim = 32
window = 8
cpb_hidden = 512


def get_inputs():
    return [torch.randn(batch, size, size, heads * head_dim)]


def get_init_inputs():
    return [size, heads * head_dim, heads, window, cpb_hidden]
