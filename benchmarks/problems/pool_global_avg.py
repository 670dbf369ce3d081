"""Global average pooling: nn.AdaptiveAvgPool2d(1) then flatten to (N, C)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return torch.flatten(self.pool(x), 1)


batch = 64
channels = 512
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []
