"""Row sums scaled and rounded to int32, a quantiser's shape: the rounding step is fine
enough (a thousandth of a row sum's unit) that a kernel summing in another order than
PyTorch rounds a few rows at a half-integer the other way, as honestly as PyTorch does."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        y = x.sum(dim=1) * self.scale
        return torch.round(y).clamp(-(2**30), 2**30).to(torch.int32)


rows = 2048
cols = 384


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [10000.0]
