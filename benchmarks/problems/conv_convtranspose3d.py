"""nn.ConvTranspose3d, kernel 3, stride 2, padding 1, output_padding 1: x2 volume upsampling."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=kernel_size // 2,
            output_padding=stride - 1,
        )

    def forward(self, x):
        return self.deconv(x)


batch = 8
in_channels = 32
out_channels = 16
depth = 32
height = 32
width = 32
kernel_size = 3
stride = 2


def get_inputs():
    return [torch.randn(batch, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
