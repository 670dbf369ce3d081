"""Reverse (suffix) cumulative sum along dim 1 of a 3-D tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])


batch = 16
seq = 4096
hidden = 1024


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return []
