"""Gated residual: linear(x) * sigmoid(gate) + residual, three inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, gate, residual):
        return self.linear(x) * torch.sigmoid(gate) + residual


batch = 8192
in_features = 2048
out_features = 4096


def get_inputs():
    return [
        torch.randn(batch, in_features),
        torch.randn(batch, out_features),
        torch.randn(batch, out_features),
    ]


def get_init_inputs():
    return [in_features, out_features]
