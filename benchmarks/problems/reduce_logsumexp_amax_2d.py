"""Spatial log-sum-exp pooling over (H, W) of an NCHW map, minus torch.amax over the same two
dims (a soft-minus-hard max gap)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        lse = torch.logsumexp(x, dim=(2, 3))
        peak = torch.amax(x, dim=(2, 3))
        return lse - peak


batch = 64
channels = 256
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []
