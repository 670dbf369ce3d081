"""3-D transposed convolution, stride 2 with output padding, then batch norm (eval) and
ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose3d(cin, cout, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm3d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.up(x)))


batch, cin, cout, depth, size = 4, 32, 16, 8, 16


def get_inputs():
    return [torch.randn(batch, cin, depth, size, size)]


def get_init_inputs():
    return [cin, cout]
