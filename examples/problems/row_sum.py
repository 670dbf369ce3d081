import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over the middle dimension of a 3-D tensor (a strided reduction)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


batch = 32
rows = 4096
cols = 1024


def get_inputs():
    return [torch.randn(batch, rows, cols)]


def get_init_inputs():
    return []
