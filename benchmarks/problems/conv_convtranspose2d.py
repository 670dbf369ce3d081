"""nn.ConvTranspose2d, kernel 4, stride 2, padding 1: a learned x2 upsampling (DCGAN-style)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )

    def forward(self, x):
        return self.deconv(x)


batch = 16
in_channels = 128
out_channels = 64
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
