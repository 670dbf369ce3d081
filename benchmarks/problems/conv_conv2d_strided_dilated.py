"""nn.Conv2d 3x3 with stride 2, dilation 2 and padding 2 (halves H and W), no bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation, padding):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            dilation=dilation,
            padding=padding,
            bias=False,
        )

    def forward(self, x):
        return self.conv(x)


batch = 16
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
stride = 2
dilation = 2
padding = 2


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation, padding]
