"""Swin Transformer patch merging (Liu et al.; the downsampling layer between stages): the
[B, H*W, C] token sequence is viewed as an image, the four 2x2 sub-lattices are taken with
strided slices x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2],
concatenated along channels into [B, H/2 * W/2, 4C], layer-normalised and reduced to 2C by a
bias-free Linear. Interesting: four strided views feeding a cat that feeds a row norm and a
GEMM (a space-to-depth without pixel_unshuffle)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, height, width):
        super().__init__()
        self.height = height
        self.width = width
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        b, _, c = x.shape
        x = x.view(b, self.height, self.width, c)
        x0 = x[:, 0::2, 0::2, :]
        x1 = x[:, 1::2, 0::2, :]
        x2 = x[:, 0::2, 1::2, :]
        x3 = x[:, 1::2, 1::2, :]
        x = torch.cat([x0, x1, x2, x3], dim=-1)
        x = x.view(b, -1, 4 * c)
        return self.reduction(self.norm(x))


batch = 64
dim = 96  # Swin-T stage 1
half_height = 28  # the 56 x 56 token grid of a 224 x 224 image, halved
half_width = 28


def get_inputs():
    return [torch.randn(batch, 4 * half_height * half_width, dim)]


def get_init_inputs():
    return [dim, 2 * half_height, 2 * half_width]
