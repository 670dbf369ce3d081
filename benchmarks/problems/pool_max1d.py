"""nn.MaxPool1d, window 4, stride 2, padding 1, on (N, C, L) sequences."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


kernel_size = 4
stride = 2
padding = 1
batch = 64
channels = 128
length = 16384


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding]
