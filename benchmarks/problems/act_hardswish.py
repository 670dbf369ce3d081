"""Hardswish on an NCHW feature map."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


batch = 32
channels = 64
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []
