"""ConvNeXt V2 block: depthwise 7x7 conv, permute to channels-last, LayerNorm, Linear to
4x width, GELU, Global Response Normalisation (per-channel L2 norm over H and W divided by
its channel mean, gamma * (x * Nx) + beta + x), Linear back, permute, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class GRN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.randn(1, 1, 1, dim) * 0.1)
        self.beta = nn.Parameter(torch.randn(1, 1, 1, dim) * 0.1)

    def forward(self, x):
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.grn = GRN(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.pwconv1(x)
        x = F.gelu(x)
        x = self.grn(x)
        x = self.pwconv2(x)
        x = x.permute(0, 3, 1, 2)
        return shortcut + x


batch, dim, height, width = 32, 128, 56, 56


def get_inputs():
    return [torch.randn(batch, dim, height, width)]


def get_init_inputs():
    return [dim]
