"""Row-wise L2 normalisation with F.normalize(p=2, dim=1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)


batch = 16384
dim = 4096


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
