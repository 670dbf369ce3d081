"""CBAM: channel attention from average- and max-pooled features through a shared MLP,
then spatial attention from channel mean and max through a 7x7 conv."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv2d(channels, channels // reduction, 1, bias=False),
                                 nn.ReLU(),
                                 nn.Conv2d(channels // reduction, channels, 1, bias=False))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3, bias=False)

    def forward(self, x):
        avg = self.mlp(x.mean((2, 3), keepdim=True))
        mx = self.mlp(x.amax((2, 3), keepdim=True))
        x = x * torch.sigmoid(avg + mx)
        s = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)
        return x * torch.sigmoid(self.spatial(s))


batch, channels, size = 32, 256, 28


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, 16]
