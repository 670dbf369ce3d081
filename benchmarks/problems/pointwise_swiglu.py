"""SwiGLU gate: split the last dim in two halves a, b and return silu(a) * b."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return F.silu(a) * b


tokens = 8192
hidden = 8192


def get_inputs():
    return [torch.randn(tokens, 2 * hidden)]


def get_init_inputs():
    return []
