"""Depthwise nn.Conv2d 3x3 (groups = channels), then SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels
        )

    def forward(self, x):
        return F.silu(self.conv(x))


batch = 32
channels = 128
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
