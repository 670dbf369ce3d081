"""T5-style RMSNorm: mean of squares in fp32 (no mean subtraction), rsqrt, the result rounded
through bfloat16 and back, then the learned scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        x = x.to(torch.bfloat16).to(torch.float32)
        return self.weight * x


batch = 8
seq = 4096
hidden = 2048
eps = 1e-6


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, eps]
