"""MaxViT grid attention block (Tu et al., "MaxViT: Multi-Axis Vision Transformer"; timm's
channels-last partition): the [B, H, W, C] map is split into a fixed G x G grid whose
windows gather pixels H/G apart (view to [B, G, H/G, G, W/G, C], permute to put the grid
axes innermost), pre-LayerNorm, multi-head self-attention over the G*G dilated tokens with a
learned relative position bias gathered from a (2G-1)^2 table by an index buffer, output
projection, the inverse permute back to [B, H, W, C], and the residual add. Interesting:
6-D view/permute pairs around attention, and a bias table gathered by a constant index."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _relative_index(g):
    coords = torch.stack(torch.meshgrid(torch.arange(g), torch.arange(g), indexing="ij"))
    coords = coords.flatten(1)  # [2, G*G]
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (g - 1)
    return rel[..., 0] * (2 * g - 1) + rel[..., 1]  # [G*G, G*G]


class Model(nn.Module):
    def __init__(self, dim, heads, grid):
        super().__init__()
        self.heads = heads
        self.grid = grid
        self.scale = (dim // heads) ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(0.02 * torch.randn((2 * grid - 1) ** 2, heads))
        self.register_buffer("rel_index", _relative_index(grid))

    def forward(self, x):
        b, h, w, c = x.shape
        g = self.grid
        # grid partition: window (i, j) holds pixels (gi * h/g + i, gj * w/g + j)
        t = x.view(b, g, h // g, g, w // g, c).permute(0, 2, 4, 1, 3, 5)
        t = t.reshape(-1, g * g, c)
        n = t.shape[0]
        qkv = self.qkv(self.norm(t)).view(n, g * g, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # [n, heads, G*G, d]
        bias = self.bias_table[self.rel_index].permute(2, 0, 1)  # [heads, G*G, G*G]
        attn = (q * self.scale) @ k.transpose(-2, -1) + bias.unsqueeze(0)
        out = F.softmax(attn, dim=-1) @ v
        out = self.proj(out.transpose(1, 2).reshape(n, g * g, c))
        # grid reverse
        out = out.view(b, h // g, w // g, g, g, c).permute(0, 3, 1, 4, 2, 5)
        return x + out.reshape(b, h, w, c)


batch = 16
heads = 2
head_dim = 32
cells = 16  # H = W = grid * cells = 112 (MaxViT-T stage 1 at 448 x 448)
grid = 7


def get_inputs():
    return [torch.randn(batch, grid * cells, grid * cells, heads * head_dim)]


def get_init_inputs():
    return [heads * head_dim, heads, grid]
