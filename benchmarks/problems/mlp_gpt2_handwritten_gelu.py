"""GPT-2 MLP: c_fc Linear, tanh-GELU written out by hand (0.5 * x * (1 + tanh(sqrt(2/pi) * (x +
0.044715 x^3)))), c_proj Linear."""

import math

import torch
import torch.nn as nn


def new_gelu(x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
    return 0.5 * x * (1.0 + torch.tanh(inner))


class Model(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.c_fc = nn.Linear(hidden, inter)
        self.c_proj = nn.Linear(inter, hidden)

    def forward(self, x):
        return self.c_proj(new_gelu(self.c_fc(x)))


batch = 8
seq = 1024
hidden = 1024
inter = 4096


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, inter]
