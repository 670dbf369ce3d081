"""Gated 1-D convolution: nn.Conv1d to twice the channels, then F.glu over the channels."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels, 2 * out_channels, kernel_size, padding=kernel_size // 2
        )

    def forward(self, x):
        return F.glu(self.conv(x), dim=1)


batch = 16
in_channels = 128
out_channels = 256
length = 8192
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
