"""Less common pointwise ops: addcmul, lerp, hypot, atan2, remainder, floor_divide, fmod."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        x = torch.addcmul(a, b, c, value=0.5)
        y = torch.lerp(a, b, 0.3) + torch.hypot(b, c) + torch.atan2(a, c)
        z = torch.remainder(a * 10, 3.0) - torch.floor_divide(b * 10, 4.0) + torch.fmod(c, 0.7)
        return x * y + z


n = 1 << 20


def get_inputs():
    return [torch.randn(n), torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []
