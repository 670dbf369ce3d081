"""An Inception block: 1x1, 1x1->3x3, 1x1->5x5 and maxpool->1x1 branches, concatenated."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, c1, c3r, c3, c5r, c5, cp):
        super().__init__()
        self.b1 = nn.Conv2d(cin, c1, 1)
        self.b3 = nn.Sequential(nn.Conv2d(cin, c3r, 1), nn.Conv2d(c3r, c3, 3, padding=1))
        self.b5 = nn.Sequential(nn.Conv2d(cin, c5r, 1), nn.Conv2d(c5r, c5, 5, padding=2))
        self.bp = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), nn.Conv2d(cin, cp, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


batch, cin, size = 8, 192, 28


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, 64, 96, 128, 16, 32, 32]
