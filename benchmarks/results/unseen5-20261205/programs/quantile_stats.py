"""Robust row scaling: the 10th, 50th and 90th percentiles of each row (torch.quantile),
then every row centred on its median and divided by its 10-90 spread."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("q", torch.tensor([0.1, 0.5, 0.9]))

    def forward(self, x):
        lo, mid, hi = torch.quantile(x, self.q, dim=1, keepdim=True)
        return (x - mid) / (hi - lo + 1e-6)


rows, cols = 65536, 200


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
