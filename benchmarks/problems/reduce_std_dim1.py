"""Population standard deviation (correction=0) over dim 1 of a 3-D tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.std(x, dim=1, correction=0)


batch = 16
reduce_len = 4096
cols = 1024


def get_inputs():
    return [torch.randn(batch, reduce_len, cols)]


def get_init_inputs():
    return []
