"""Hyperbolic tangent on a 3-D tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)


batch = 8
rows = 4096
cols = 4096


def get_inputs():
    return [torch.randn(batch, rows, cols)]


def get_init_inputs():
    return []
