"""Phi-3 MLP: a single fused gate_up projection to 2 * inter features, chunked into the gate
and up halves, up * SiLU(gate), then the down projection (no biases)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(up * F.silu(gate))


batch = 4
seq = 1024
hidden = 2048
inter = 5632


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, inter]
