"""F.pad with a constant border on the two spatial dims of an NCHW map, then an affine
map (the explicit padding some ported models do before a 'valid' convolution)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, pad, value):
        super().__init__()
        self.pad = pad
        self.value = value

    def forward(self, x):
        return F.pad(x, self.pad, value=self.value) * 2.0 - 1.0


batch = 32
channels = 64
height = 126
width = 126
pad = (1, 1, 1, 1)
value = 0.25


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [pad, value]
