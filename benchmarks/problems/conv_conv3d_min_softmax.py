"""nn.Conv3d, minimum over the depth axis, then softmax over channels."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = torch.amin(self.conv(x), dim=2)
        return torch.softmax(y, dim=1)


batch = 16
in_channels = 3
out_channels = 16
depth = 32
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
