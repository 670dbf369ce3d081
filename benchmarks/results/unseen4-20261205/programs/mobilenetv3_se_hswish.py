"""MobileNetV3 bottleneck tail: depthwise 5x5 conv, BatchNorm, hardswish, squeeze-excite
with ReLU and hardsigmoid, 1x1 projection, BatchNorm (eval mode)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, squeeze, out_channels):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 5, padding=2, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.proj = nn.Conv2d(channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.eval()

    def forward(self, x):
        x = F.hardswish(self.bn1(self.dw(x)))
        s = F.adaptive_avg_pool2d(x, 1)
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))
        return self.bn2(self.proj(x * s))


batch, channels, squeeze, out_channels, size = 32, 240, 64, 80, 28


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, squeeze, out_channels]
