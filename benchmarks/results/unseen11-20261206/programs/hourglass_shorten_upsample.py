"""Hourglass transformer (Nawrot et al.) shortening and upsampling around a shortened
block: shift right by k-1 (causal), average k consecutive tokens (view + mean), a linear
projection and a pre-LN GELU MLP on the short sequence, upsampling with
repeat_interleave along the sequence dim, a residual from the full-length stream, LN."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden, factor):
        super().__init__()
        self.factor = factor
        self.down = nn.Linear(dim, dim)
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.up = nn.Linear(dim, dim)
        self.ln_out = nn.LayerNorm(dim)

    def forward(self, x):
        b, t, d = x.shape
        k = self.factor
        shifted = F.pad(x, (0, 0, k - 1, 0))[:, :t]
        short = self.down(shifted.view(b, t // k, k, d).mean(dim=2))
        short = short + self.fc2(F.gelu(self.fc1(self.ln(short))))
        up = torch.repeat_interleave(short, k, dim=1)  # [b, t, d]
        return self.ln_out(x + self.up(up))


batch = 8
seq_len = 1024
dim = 512
hidden = 2048
factor = 4


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, hidden, factor]
