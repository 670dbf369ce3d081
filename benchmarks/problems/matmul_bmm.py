"""Batched matmul with torch.bmm: (B, M, K) @ (B, K, N)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


batch = 32
m = 1024
k = 2048
n = 1024


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
