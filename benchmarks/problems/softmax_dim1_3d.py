"""Softmax over dim=1 of a 3-D tensor (strided reduction axis)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


batch = 32
classes = 1024
positions = 2048


def get_inputs():
    return [torch.randn(batch, classes, positions)]


def get_init_inputs():
    return []
