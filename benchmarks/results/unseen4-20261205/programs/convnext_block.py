"""ConvNeXt block: depthwise 7x7 conv, NHWC permute, LayerNorm, Linear 4x, GELU, Linear,
layer scale, permute back, residual."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.pwconv2(self.act(self.pwconv1(x)))
        x = self.gamma * x
        return shortcut + x.permute(0, 3, 1, 2)


batch, dim, size = 16, 128, 56


def get_inputs():
    return [torch.randn(batch, dim, size, size)]


def get_init_inputs():
    return [dim]
