"""Minimum over the last dimension of a 3-D tensor with torch.amin."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amin(x, dim=2)


batch = 64
rows = 1024
cols = 2048


def get_inputs():
    return [torch.randn(batch, rows, cols)]


def get_init_inputs():
    return []
