"""Sum and mean of squares over the batch dim of a [4096, 16384] matrix (column reductions)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0), (x * x).mean(dim=0)


rows = 4096
cols = 16384


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
