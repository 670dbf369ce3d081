"""A cumulative product along the last dim and a masked cumulative sum along dim 1."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, mask):
        p = torch.cumprod(1 + 0.01 * x, dim=-1)
        s = torch.cumsum(x * mask, dim=1)
        return p + s


batch, rows, cols = 32, 256, 512


def get_inputs():
    return [torch.randn(batch, rows, cols), (torch.rand(batch, rows, cols) > 0.5).float()]


def get_init_inputs():
    return []
