"""ShuffleNet channel shuffle: view (N, g, C/g, H, W), transpose the group axes, contiguous,
view back, then a per-channel affine and ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.groups = groups
        self.scale = nn.Parameter(torch.randn(channels))
        self.shift = nn.Parameter(torch.randn(channels))

    def forward(self, x):
        n, c, h, w = x.shape
        x = x.view(n, self.groups, c // self.groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        x = x.view(n, c, h, w)
        return torch.relu(x * self.scale.view(1, c, 1, 1) + self.shift.view(1, c, 1, 1))


batch = 32
channels = 256
groups = 4  # below 16: a constant
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
