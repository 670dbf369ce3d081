"""Argmax over the middle dimension of a 3-D tensor (int64 output)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=1)


batch = 32
reduce_len = 4096
cols = 1024


def get_inputs():
    return [torch.randn(batch, reduce_len, cols)]


def get_init_inputs():
    return []
