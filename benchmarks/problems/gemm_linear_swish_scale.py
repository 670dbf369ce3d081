"""nn.Linear with a long reduction (K=8192), swish, then a constant scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.linear(x)
        return y * torch.sigmoid(y) * self.scale


batch = 4096
in_features = 8192
out_features = 4096
scale = 1.75


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
