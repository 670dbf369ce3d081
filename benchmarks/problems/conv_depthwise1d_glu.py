"""Conformer-style conv module: pointwise Conv1d to 2C, GLU over channels, depthwise
Conv1d (kernel 15), SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.pw = nn.Conv1d(channels, 2 * channels, 1)
        self.dw = nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=channels)

    def forward(self, x):
        y = F.glu(self.pw(x), dim=1)
        return F.silu(self.dw(y))


batch = 32
channels = 256
length = 4096
kernel = 15  # odd, below 16: a constant (reduced sizes keep it)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, kernel]
