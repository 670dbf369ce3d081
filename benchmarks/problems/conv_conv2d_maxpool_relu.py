"""ResNet-style stem: nn.Conv2d 7x7 stride 2 from RGB, nn.MaxPool2d 3x3 stride 2, then ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=kernel_size // 2
        )
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.pool(self.conv(x)))


batch = 64
in_channels = 3
out_channels = 64
height = 224
width = 224
kernel_size = 7
stride = 2


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
