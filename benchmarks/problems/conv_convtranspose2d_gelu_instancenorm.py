"""nn.ConvTranspose2d 2x2 stride 2 (x2 upsampling), exact GELU, then affine nn.InstanceNorm2d."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)

    def forward(self, x):
        return self.norm(F.gelu(self.deconv(x)))


batch = 16
in_channels = 64
out_channels = 32
height = 128
width = 128
kernel_size = 2
stride = 2


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
