"""ReLU of a non-negative input: `return x` is numerically right, so only an alias
check can reject a candidate that returns its input."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch = 64
dim = 256


def get_inputs():
    return [torch.rand(batch, dim)]


def get_init_inputs():
    return []
