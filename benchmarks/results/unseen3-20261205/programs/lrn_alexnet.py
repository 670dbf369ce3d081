"""AlexNet's first stage: conv 11x11 stride 4, ReLU, local response normalisation, max pool."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 11, stride=4, padding=2)
        self.lrn = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=2.0)
        self.pool = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return self.pool(self.lrn(torch.relu(self.conv(x))))


batch = 16


def get_inputs():
    return [torch.randn(batch, 3, 224, 224)]


def get_init_inputs():
    return []
