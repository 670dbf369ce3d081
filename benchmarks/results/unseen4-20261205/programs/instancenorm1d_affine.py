"""InstanceNorm1d with affine parameters over [B, C, L] features, then leaky ReLU and a
residual."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm1d(channels, affine=True)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        return x + self.act(self.norm(x))


batch, channels, length = 64, 256, 2048


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels]
