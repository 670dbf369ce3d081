"""Weight normalisation computed in forward: w = g * v / ||v|| per output row, then a
linear layer with bias and a tanh."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.v = nn.Parameter(torch.randn(fout, fin))
        self.g = nn.Parameter(torch.ones(fout, 1))
        self.b = nn.Parameter(torch.zeros(fout))

    def forward(self, x):
        w = self.g * self.v / self.v.norm(dim=1, keepdim=True)
        return torch.tanh(nn.functional.linear(x, w, self.b))


batch, fin, fout = 2048, 1024, 1024


def get_inputs():
    return [torch.randn(batch, fin)]


def get_init_inputs():
    return [fin, fout]
