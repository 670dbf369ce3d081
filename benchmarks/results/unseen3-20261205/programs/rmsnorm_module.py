"""nn.RMSNorm (a module since torch 2.4) after a Linear, then SiLU gating."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.norm = nn.RMSNorm(dim, eps=1e-6)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return self.norm(a) * nn.functional.silu(b)


batch, seq, dim = 8, 256, 512


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim]
