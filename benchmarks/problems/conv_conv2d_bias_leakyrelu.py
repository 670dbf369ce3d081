"""nn.Conv2d 3x3 without bias, a separate learned per-channel bias, then leaky ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, negative_slope):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False
        )
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(self.conv(x) + self.bias, self.negative_slope)


batch = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, negative_slope]
