"""Linear, AvgPool1d over features, GELU, scale, then max over features (level-2 style)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, fin, fout, pool, scale):
        super().__init__()
        self.fc = nn.Linear(fin, fout)
        self.pool = nn.AvgPool1d(pool)
        self.scale = scale

    def forward(self, x):
        y = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        y = nn.functional.gelu(y) * self.scale
        return y.max(dim=1).values


batch, fin, fout, pool = 1024, 512, 1024, 4


def get_inputs():
    return [torch.randn(batch, fin)]


def get_init_inputs():
    return [fin, fout, pool, 2.0]
