"""Softmax over the last dimension of a 2-D tensor (one row per program)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


batch = 8192
dim = 16384


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
