"""torch.triu of a product of upper-triangular matrices, scaled per row by diag(d):
diag(d) @ triu(A @ B)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b, d):
        return torch.diag(d) @ torch.triu(torch.triu(a) @ torch.triu(b))


n = 2048


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n), torch.randn(n)]


def get_init_inputs():
    return []
