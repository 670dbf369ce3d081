"""Mean over the middle dimension of a 3-D tensor, keepdim=True."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=1, keepdim=True)


batch = 16
seq = 4096
hidden = 2048


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return []
