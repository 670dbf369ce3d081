"""ReLU on a large 2-D activation (memory-bound pointwise)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch = 16384
dim = 8192


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
