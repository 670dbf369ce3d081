"""Space-to-depth (nn.PixelUnshuffle) before a 1x1 convolution and hardswish."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout, factor):
        super().__init__()
        self.down = nn.PixelUnshuffle(factor)
        self.conv = nn.Conv2d(cin * factor * factor, cout, 1)

    def forward(self, x):
        return nn.functional.hardswish(self.conv(self.down(x)))


batch, cin, cout, size, factor = 8, 16, 64, 128, 2


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, cout, factor]
