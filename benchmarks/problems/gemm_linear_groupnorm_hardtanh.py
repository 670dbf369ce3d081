"""nn.Linear, then nn.GroupNorm over the features, then hardtanh."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups, min_val, max_val):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, out_features)
        self.act = nn.Hardtanh(min_val=min_val, max_val=max_val)

    def forward(self, x):
        return self.act(self.norm(self.linear(x)))


batch = 8192
in_features = 2048
out_features = 4096
num_groups = 8
min_val = -1.5
max_val = 1.5


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, min_val, max_val]
