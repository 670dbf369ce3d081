"""nn.Conv2d 3x3, nn.GroupNorm with 8 groups, then SiLU (a diffusion-UNet resblock half)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


batch = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
num_groups = 8


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
