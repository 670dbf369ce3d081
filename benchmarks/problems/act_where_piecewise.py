"""A piecewise activation written with torch.where: linear above a knee, a cubic smooth-step
between -knee and knee, a decaying exponential tail below."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, knee):
        super().__init__()
        self.knee = knee

    def forward(self, x):
        a = self.knee
        t = (x + a) / (2 * a)
        cubic = a * t * t * (3 - 2 * t) * 2 - a
        tail = -a * torch.exp(x + a)
        return torch.where(x > a, x, torch.where(x < -a, tail, cubic))


batch = 32
seq = 2048
hidden = 1024
knee = 1.5


def get_inputs():
    return [torch.randn(batch, seq, hidden) * 2]


def get_init_inputs():
    return [knee]
