"""nn.Conv2d 3x3 without bias, nn.BatchNorm2d in training mode, then ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False
        )
        self.norm = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


batch = 32
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
