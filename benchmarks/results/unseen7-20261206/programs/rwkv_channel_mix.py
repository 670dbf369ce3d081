"""RWKV-4 channel mixing: token shift (the previous time step through nn.ZeroPad2d with a
negative bottom pad), learned per-channel interpolation between the current and shifted
token for key and receptance, squared-ReLU key, value projection gated by
sigmoid(receptance)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        ratio = 1.0 - torch.arange(dim, dtype=torch.float32) / dim
        self.time_mix_k = nn.Parameter(ratio.pow(0.5).view(1, 1, dim))
        self.time_mix_r = nn.Parameter(ratio.pow(0.8).view(1, 1, dim))
        self.key = nn.Linear(dim, hidden, bias=False)
        self.receptance = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)  # x[:, t-1], zeros at t = 0
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = torch.square(torch.relu(self.key(xk)))
        kv = self.value(k)
        return torch.sigmoid(self.receptance(xr)) * kv


batch = 8
seq = 1024
dim = 1024
hidden = 4096


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, hidden]
