"""nn.AvgPool2d, 5x5 window, stride 2, padding 2 (padding counted)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


kernel_size = 5
stride = 2
padding = 2
batch = 32
channels = 128
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
