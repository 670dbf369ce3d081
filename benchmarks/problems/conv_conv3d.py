"""Plain nn.Conv3d 3x3x3 with bias and same padding on a volumetric (N, C, D, H, W) input."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


batch = 8
in_channels = 16
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
