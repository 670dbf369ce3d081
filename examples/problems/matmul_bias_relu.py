import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x @ W^T + b): nn.Linear followed by ReLU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


batch = 4096
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
