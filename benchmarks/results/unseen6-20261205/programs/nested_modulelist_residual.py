"""A stack of six pre-norm residual MLP blocks, each with a learned scalar gate on its
branch; after every even-numbered block a tanh of the stream is added back; the result
is averaged over the sequence."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.gate = nn.Parameter(torch.zeros(1))
        self.drop_path = 0.0  # stochastic depth disabled

    def forward(self, x):
        h = self.fc2(F.gelu(self.fc1(self.norm(x))))
        return x + self.gate * h


class Model(nn.Module):
    def __init__(self, dim, hidden, depth=6):
        super().__init__()
        self.blocks = nn.ModuleList([GatedBlock(dim, hidden) for _ in range(depth)])

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i % 2 == 0:
                x = x + torch.tanh(x)
        return x.mean(dim=1)


batch = 16
seq = 1024
dim = 512
hidden = 2048


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, hidden, 6]
