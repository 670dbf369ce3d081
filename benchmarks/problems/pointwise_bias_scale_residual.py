"""Per-channel bias and learned scale, then a residual add: (x + b) * s + r."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)
        self.scale = nn.Parameter(1.0 + torch.randn(hidden) * 0.1)

    def forward(self, x, residual):
        return (x + self.bias) * self.scale + residual


batch = 8
seq = 2048
hidden = 4096


def get_inputs():
    return [torch.randn(batch, seq, hidden), torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden]
