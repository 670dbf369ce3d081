"""nn.Conv1d over long sequences (kernel 5, same padding), then tanh."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return torch.tanh(self.conv(x))


batch = 32
in_channels = 128
out_channels = 256
length = 8192
kernel_size = 5


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
