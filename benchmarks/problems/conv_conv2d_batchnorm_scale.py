"""nn.Conv2d 3x3, nn.BatchNorm2d in training mode, then a constant output scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.BatchNorm2d(out_channels)
        self.scale = scale

    def forward(self, x):
        return self.norm(self.conv(x)) * self.scale


batch = 32
in_channels = 32
out_channels = 64
height = 128
width = 128
kernel_size = 3
scale = 0.5


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale]
