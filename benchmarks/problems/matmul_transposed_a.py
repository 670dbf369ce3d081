"""A.T @ B with A stored K x M (transposed, non-contiguous left operand)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a_km, b):
        return torch.matmul(a_km.T, b)


m = 2048
k = 8192
n = 4096


def get_inputs():
    return [torch.randn(k, m), torch.randn(k, n)]


def get_init_inputs():
    return []
