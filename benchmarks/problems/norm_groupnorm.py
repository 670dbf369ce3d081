"""nn.GroupNorm with 8 groups on an NCHW feature map."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return self.norm(x)


num_groups = 8
batch = 32
channels = 256
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [num_groups, channels]
