"""nn.Linear, sigmoid, then logsumexp over the features (one value per row)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.logsumexp(torch.sigmoid(self.linear(x)), dim=1)


batch = 8192
in_features = 2048
out_features = 8192


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
