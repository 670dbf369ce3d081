"""nn.Conv2d (no padding), GELU, then global average pooling to (N, C)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = F.gelu(self.conv(x))
        return F.adaptive_avg_pool2d(y, 1).flatten(1)


batch = 32
in_channels = 32
out_channels = 128
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
