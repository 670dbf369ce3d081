"""Broadcast matmul of a 3-D activation by a 2-D weight: (B, S, K) @ (K, N)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.matmul(x, w)


batch = 16
seq = 1024
k = 2048
n = 2048


def get_inputs():
    return [torch.randn(batch, seq, k), torch.randn(k, n)]


def get_init_inputs():
    return []
