"""Replicate and circular padding around a depthwise 3x3 convolution, summed."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 3, groups=channels)

    def forward(self, x):
        a = self.dw(F.pad(x, (1, 1, 1, 1), mode="replicate"))
        b = self.dw(F.pad(x, (1, 1, 1, 1), mode="circular"))
        return a + b


batch, channels, size = 4, 32, 64


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels]
