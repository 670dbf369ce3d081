"""ConvNeXt block tail: 7x7 depthwise conv, permute to NHWC, LayerNorm over channels,
Linear-GELU-Linear, layer scale, permute back, residual."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        y = self.dwconv(x)
        y = y.permute(0, 2, 3, 1)
        y = self.norm(y)
        y = self.pw2(self.act(self.pw1(y)))
        y = self.gamma * y
        y = y.permute(0, 3, 1, 2)
        return x + y


batch = 32
dim = 128
height = 56
width = 56


def get_inputs():
    return [torch.randn(batch, dim, height, width)]


def get_init_inputs():
    return [dim]
