"""ViT patch embedding by reshape/permute (non-overlapping 8x8 patches), Linear projection, a
class token concatenated in front, learned position embeddings added."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_chans, patch, dim, num_patches):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(in_chans * patch * patch, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.02)

    def forward(self, x):
        b, c, h, w = x.shape
        p = self.patch
        x = x.reshape(b, c, h // p, p, w // p, p)
        x = x.permute(0, 2, 4, 1, 3, 5).reshape(b, (h // p) * (w // p), c * p * p)
        x = self.proj(x)
        cls = self.cls_token.expand(b, -1, -1)
        x = torch.cat((cls, x), dim=1)
        return x + self.pos_embed


batch = 64
in_chans = 3  # below 16: a constant
patch = 8  # below 16: a constant
height = 256
width = 256
dim = 768


def get_inputs():
    return [torch.randn(batch, in_chans, height, width)]


def get_init_inputs():
    return [in_chans, patch, dim, (height // patch) * (width // patch)]
