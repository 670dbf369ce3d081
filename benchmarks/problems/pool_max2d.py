"""nn.MaxPool2d, 3x3 window, stride 2, padding 1, on an NCHW map."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


kernel_size = 3
stride = 2
padding = 1
batch = 32
channels = 64
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
