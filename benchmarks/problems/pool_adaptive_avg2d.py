"""nn.AdaptiveAvgPool2d to 7x7 on a 56x56 NCHW map (windows of uneven width when the
input is not a multiple of 7), as in classifier heads."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, out_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(out_size)

    def forward(self, x):
        return self.pool(x)


out_size = 7
batch = 64
channels = 512
height = 56
width = 56


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [out_size]
