"""nn.Linear, leaky ReLU, then the maximum over the output features."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, negative_slope):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.negative_slope = negative_slope

    def forward(self, x):
        y = F.leaky_relu(self.linear(x), negative_slope=self.negative_slope)
        return torch.amax(y, dim=1)


batch = 8192
in_features = 4096
out_features = 2048
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
