"""nn.Linear, nn.BatchNorm1d in training mode, then ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.relu(self.norm(self.linear(x)))


batch = 8192
in_features = 2048
out_features = 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
