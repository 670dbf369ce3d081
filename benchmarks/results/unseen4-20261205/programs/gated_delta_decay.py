"""A linear-recurrence gate as state-space and linear-attention layers compute it: softplus
step sizes, a decay exp(-exp(a) * dt), its cumulative log-sum along time for the segment
decays, and gated inputs."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.a_log = nn.Parameter(torch.randn(heads) * 0.5)
        self.dt_bias = nn.Parameter(torch.randn(heads) * 0.1)

    def forward(self, x, dt):
        # x: [B, T, H, D], dt: [B, T, H]
        dt = F.softplus(dt + self.dt_bias)
        log_decay = -torch.exp(self.a_log) * dt
        cum = torch.cumsum(log_decay, dim=1)
        return x * dt[..., None], torch.exp(cum)


batch, time, heads, head_dim = 8, 2048, 32, 64


def get_inputs():
    return [torch.randn(batch, time, heads, head_dim), torch.randn(batch, time, heads)]


def get_init_inputs():
    return [heads]
