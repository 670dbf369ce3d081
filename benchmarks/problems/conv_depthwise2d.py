"""Depthwise nn.Conv2d 5x5 (groups = channels, one filter per channel), same padding."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels
        )

    def forward(self, x):
        return self.conv(x)


batch = 16
channels = 256
height = 112
width = 112
kernel_size = 5


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
