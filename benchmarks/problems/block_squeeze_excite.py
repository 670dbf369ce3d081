"""Squeeze-and-excitation: global average pool, Linear-ReLU-Linear-sigmoid, channel scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        b, c, _, _ = x.shape
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * s.view(b, c, 1, 1)


batch = 32
channels = 256
reduction = 4  # below 16: a constant, not a size
height = 56
width = 56


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, reduction]
