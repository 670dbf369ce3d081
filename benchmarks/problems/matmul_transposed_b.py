"""A @ B.T with B stored N x K (the nn.Linear weight layout)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b_nk):
        return a @ b_nk.transpose(0, 1)


m = 2048
k = 4096
n = 6144


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
