"""A simplified state-space mixer: input projection split into a signal and a gate, a
causal depthwise 1-D convolution with SiLU on the signal, a per-channel exponentially
decaying scan written with cumulative sums in log space, gated by SiLU of the gate, and an
output projection."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, kernel_size=4):
        super().__init__()
        self.in_proj = nn.Linear(dim, 2 * dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size - 1, groups=dim)
        # decay rates softplus(A) spread log-uniformly over [1e-3, 1e-2]
        rate = torch.exp(torch.linspace(math.log(1e-3), math.log(1e-2), dim))
        self.A = nn.Parameter(torch.log(torch.expm1(rate)))
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        seq_len = x.shape[1]
        u, z = self.in_proj(x).chunk(2, dim=-1)
        u = self.conv(u.transpose(1, 2))[..., :seq_len]
        u = F.silu(u)  # [B, D, L]
        log_decay = -F.softplus(self.A)
        cs = log_decay[:, None].expand(-1, seq_len).cumsum(dim=-1).clamp(min=-60.0)
        y = torch.exp(cs) * torch.cumsum(u * torch.exp(-cs), dim=-1)
        y = y.transpose(1, 2) * F.silu(z)
        return self.out_proj(y)


batch = 16
seq = 2048
dim = 512


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim]
