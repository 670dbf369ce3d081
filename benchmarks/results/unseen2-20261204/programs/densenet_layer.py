"""DenseNet layer pair: BN-ReLU-Conv1x1-BN-ReLU-Conv3x3, its output concatenated to the
input along channels, twice."""

import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.f = nn.Sequential(
            nn.BatchNorm2d(cin),
            nn.ReLU(),
            nn.Conv2d(cin, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth),
            nn.ReLU(),
            nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x):
        return torch.cat([x, self.f(x)], 1)


class Model(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.l1 = Layer(cin, growth)
        self.l2 = Layer(cin + growth, growth)

    def forward(self, x):
        return self.l2(self.l1(x))


batch, cin, growth, size = 8, 64, 32, 32


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, growth]
