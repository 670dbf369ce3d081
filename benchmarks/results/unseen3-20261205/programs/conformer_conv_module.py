"""Conformer convolution module: LayerNorm over channels, pointwise conv to 2C, GLU,
depthwise conv along time, BatchNorm1d, SiLU, pointwise conv, residual; (B, T, C) in and
out, transposed to (B, C, T) for the convolutions."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.pw1 = nn.Conv1d(channels, 2 * channels, 1)
        self.glu = nn.GLU(dim=1)
        self.dw = nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=channels)
        self.bn = nn.BatchNorm1d(channels)
        self.act = nn.SiLU()
        self.pw2 = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        y = self.norm(x).transpose(1, 2)
        y = self.glu(self.pw1(y))
        y = self.act(self.bn(self.dw(y)))
        y = self.pw2(y).transpose(1, 2)
        return x + y


batch, time, channels, kernel = 8, 512, 256, 31


def get_inputs():
    return [torch.randn(batch, time, channels)]


def get_init_inputs():
    return [channels, kernel]
