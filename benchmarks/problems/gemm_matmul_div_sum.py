"""x @ W^T (no bias), divided by a constant, then summed over the features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features**0.5)
        self.divisor = divisor

    def forward(self, x):
        y = torch.matmul(x, self.weight.T) / self.divisor
        return torch.sum(y, dim=1, keepdim=True)


batch = 8192
in_features = 4096
out_features = 4096
divisor = 3.0


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
