"""nn.MaxPool3d, 3x3x3 window, stride 2, padding 1, on an NCDHW volume."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


kernel_size = 3
stride = 2
padding = 1
batch = 16
channels = 32
depth = 32
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
