"""Average pooling with ceil_mode and count_include_pad=False, then max pooling with
dilation (odd sizes: partial windows at the edges)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.avg = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.max = nn.MaxPool2d(3, stride=1, padding=1, dilation=2)

    def forward(self, x):
        return self.max(self.avg(x))


batch, channels, size = 16, 64, 113


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return []
