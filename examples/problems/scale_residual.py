import torch
import torch.nn as nn


class Model(nn.Module):
    """tanh(x * w + b) + y with per-column parameters w and b."""

    def __init__(self, hidden):
        super().__init__()
        self.w = nn.Parameter(torch.ones(hidden))
        self.b = nn.Parameter(torch.zeros(hidden))

    def forward(self, x, y):
        return (x * self.w + self.b).tanh() + y


batch = 16384
hidden = 4096


def get_inputs():
    return [torch.randn(batch, hidden), torch.randn(batch, hidden)]


def get_init_inputs():
    return [hidden]
