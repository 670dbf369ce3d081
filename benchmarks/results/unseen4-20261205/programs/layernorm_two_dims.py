"""F.layer_norm over the last two dims (a per-sample [T, C] normalisation) with an affine
weight of that shape, then a tanh-approximated GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, t, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(t, c) * 0.1 + 1)
        self.bias = nn.Parameter(torch.randn(t, c) * 0.1)

    def forward(self, x):
        y = F.layer_norm(x, x.shape[-2:], self.weight, self.bias, eps=1e-5)
        return F.gelu(y, approximate="tanh")


batch, t, c = 256, 64, 256


def get_inputs():
    return [torch.randn(batch, t, c)]


def get_init_inputs():
    return [t, c]
