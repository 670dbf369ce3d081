"""A grouped 3-D convolution with an asymmetric kernel (3, 5, 1), stride (1, 2, 2) and
bias, then GroupNorm and GELU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout, groups):
        super().__init__()
        self.conv = nn.Conv3d(
            cin, cout, (3, 5, 1), stride=(1, 2, 2), padding=(1, 2, 0), groups=groups
        )
        self.norm = nn.GroupNorm(groups, cout)

    def forward(self, x):
        return nn.functional.gelu(self.norm(self.conv(x)))


batch, cin, cout, groups, depth, size = 4, 32, 64, 4, 8, 32


def get_inputs():
    return [torch.randn(batch, cin, depth, size, size)]


def get_init_inputs():
    return [cin, cout, groups]
