"""Swin shifted-window prologue: cyclic shift of an NHWC map with torch.roll on H and W, then
LayerNorm over channels, and a flipped (reverse-W) residual."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, shift):
        super().__init__()
        self.shift = shift
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        shifted = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        return self.norm(shifted) + x.flip(2)


batch = 32
height = 64
width = 64
dim = 256
shift = 3  # below 16: a constant


def get_inputs():
    return [torch.randn(batch, height, width, dim)]


def get_init_inputs():
    return [dim, shift]
