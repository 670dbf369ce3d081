"""LayerNorm2d (ConvNeXt / SAM): normalise an NCHW map over the channel dim, mean and biased
variance written out, per-channel weight and bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


batch = 32
channels = 256
height = 64
width = 64
eps = 1e-6


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, eps]
