"""Product over a short middle dimension of a 3-D tensor (eight factors per output)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.prod(x, dim=self.dim)


dim = 1
batch = 1024
factors = 8
features = 8192


def get_inputs():
    return [torch.randn(batch, factors, features)]


def get_init_inputs():
    return [dim]
