"""nn.Upsample(scale_factor=2, mode="nearest") of an NCHW map, then a per-channel scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.gain = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        return self.up(x) * self.gain


batch = 32
channels = 128
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
