"""MobileNetV2 inverted residual: 1x1 expand, BN, ReLU6, depthwise 3x3, BN, ReLU6, 1x1
project, BN, residual add (eval mode)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, expand):
        super().__init__()
        hid = channels * expand
        self.block = nn.Sequential(
            nn.Conv2d(channels, hid, 1, bias=False),
            nn.BatchNorm2d(hid),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hid, hid, 3, padding=1, groups=hid, bias=False),
            nn.BatchNorm2d(hid),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hid, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        return x + self.block(x)


batch, channels, expand, size = 16, 32, 6, 56


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, expand]
