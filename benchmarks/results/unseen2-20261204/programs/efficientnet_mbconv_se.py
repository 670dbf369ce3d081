"""EfficientNet MBConv block in training mode: 1x1 expand, BN, SiLU, depthwise 5x5 stride 2,
BN, SiLU, squeeze-excite (global pool, two 1x1 convs, sigmoid gate), 1x1 project, BN."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout, expand, se_ratio):
        super().__init__()
        hid = cin * expand
        se = max(1, int(cin * se_ratio))
        self.expand = nn.Sequential(
            nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.SiLU()
        )
        self.dw = nn.Sequential(
            nn.Conv2d(hid, hid, 5, stride=2, padding=2, groups=hid, bias=False),
            nn.BatchNorm2d(hid),
            nn.SiLU(),
        )
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(hid, se, 1),
            nn.SiLU(),
            nn.Conv2d(se, hid, 1),
            nn.Sigmoid(),
        )
        self.project = nn.Sequential(nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.dw(self.expand(x))
        return self.project(h * self.se(h))


batch, cin, cout, expand, size = 8, 24, 40, 6, 56


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, cout, expand, 0.25]
