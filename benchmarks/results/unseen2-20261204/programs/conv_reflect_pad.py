"""A 3x3 convolution with reflect padding (a padding mode the template may not take),
then SiLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, padding_mode="reflect")

    def forward(self, x):
        return nn.functional.silu(self.conv(x))


batch, cin, cout, size = 8, 32, 64, 64


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, cout]
