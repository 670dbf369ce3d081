"""nn.ConvTranspose2d upsampling x2, add a skip tensor, then hardswish."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=1, output_padding=1
        )

    def forward(self, x, skip):
        return F.hardswish(self.deconv(x) + skip)


batch = 16
in_channels = 64
out_channels = 32
height = 128
width = 128
kernel_size = 3
stride = 2


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    skip = torch.randn(batch, out_channels, height * stride, width * stride)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
