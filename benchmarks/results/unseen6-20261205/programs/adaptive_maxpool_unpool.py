"""Max-pool with switches and unpool: 2x2 max pooling keeping the argmax indices, ReLU
and a learned per-channel scale on the pooled map, max-unpooling back to full resolution
through the saved indices, then a residual add of the input."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2)
        self.act = nn.ReLU()
        self.gain = nn.Parameter(torch.linspace(0.5, 1.5, channels).view(1, channels, 1, 1))

    def forward(self, x):
        pooled, switches = self.pool(x)
        pooled = self.act(pooled) * self.gain
        restored = self.unpool(pooled, switches, output_size=x.size()[-2:])
        return restored + x


batch = 32
channels = 64
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
