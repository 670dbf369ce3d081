"""8x8 block sums plus a parameter sized from (height // 8) * (width // 8): a size that
looks constructor-free when probed once (at reduced sizes 37 // 8 == 32 // 8)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_blocks):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(n_blocks))

    def forward(self, x):
        b, h, w = x.shape
        s = x.view(b, h // 8, 8, w // 8, 8).sum(dim=(2, 4)).reshape(b, -1)
        return s + self.pos


batch = 64
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch, height, width)]


def get_init_inputs():
    return [(height // 8) * (width // 8)]
