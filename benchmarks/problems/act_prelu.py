"""PReLU with one learned slope per channel on an NCHW tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.prelu = nn.PReLU(num_parameters=channels, init=0.2)

    def forward(self, x):
        return self.prelu(x)


batch = 32
channels = 128
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
