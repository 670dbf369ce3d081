"""Diffusion timestep embedding: sinusoidal features (exp of a scaled arange, t * freqs,
cat(cos, sin)), then Linear-SiLU-Linear."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, freq_dim, hidden, max_period):
        super().__init__()
        self.freq_dim = freq_dim
        self.max_period = max_period
        self.fc1 = nn.Linear(freq_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)

    def forward(self, t):
        half = self.freq_dim // 2
        freqs = torch.exp(-math.log(self.max_period)
                          * torch.arange(half, dtype=torch.float32, device=t.device) / half)
        args = t[:, None].float() * freqs[None]
        emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        return self.fc2(torch.nn.functional.silu(self.fc1(emb)))


batch = 16384
freq_dim = 256
hidden = 2048
max_period = 10000.0


def get_inputs():
    return [torch.randint(0, 1000, (batch,), dtype=torch.int64)]


def get_init_inputs():
    return [freq_dim, hidden, max_period]
