"""nn.Linear, scale, tanh, then clamp to a narrower interval."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale, clamp_min, clamp_max):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        y = torch.tanh(self.linear(x) * self.scale)
        return torch.clamp(y, min=self.clamp_min, max=self.clamp_max)


batch = 8192
in_features = 2048
out_features = 2048
scale = 2.0
clamp_min = -0.6
clamp_max = 0.8


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale, clamp_min, clamp_max]
