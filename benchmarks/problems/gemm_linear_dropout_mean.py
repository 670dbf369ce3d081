"""nn.Linear, nn.Dropout(p=0), then the mean over the output features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p=0.0)

    def forward(self, x):
        return torch.mean(self.dropout(self.linear(x)), dim=1, keepdim=True)


batch = 8192
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
