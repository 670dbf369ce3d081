"""Matrix-vector product (M x K) @ (K,) returning a 1-D vector."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.matmul(a, x)


m = 16384
k = 8192


def get_inputs():
    return [torch.randn(m, k), torch.randn(k)]


def get_init_inputs():
    return []
