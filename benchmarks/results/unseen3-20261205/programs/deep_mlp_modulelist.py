"""A deep residual MLP: eight blocks held in an nn.ModuleList, each LayerNorm, Linear,
Mish, Linear, residual, applied in a Python loop."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(nn.functional.mish(self.fc1(self.norm(x))))


class Model(nn.Module):
    def __init__(self, dim, hidden, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, hidden) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


batch, dim, hidden, depth = 1024, 512, 1024, 8


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim, hidden, depth]
