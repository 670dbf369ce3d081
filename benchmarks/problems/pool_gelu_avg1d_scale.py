"""GELU, then nn.AvgPool1d (window 4, stride 4) over a sequence, then a scale: the
activation before the pool is recomputed per window tap, never stored."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, scale):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size)
        self.scale = scale

    def forward(self, x):
        return self.pool(torch.nn.functional.gelu(x)) * self.scale


kernel_size = 4
scale = 1.5
batch = 64
channels = 256
length = 8192


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [kernel_size, scale]
