"""A pointwise chain: gelu(x) * 2 + tanh(x)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x) * 2.0 + torch.tanh(x)


batch = 64
dim = 256


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
