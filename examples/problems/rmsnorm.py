import torch
import torch.nn as nn


class Model(nn.Module):
    """RMSNorm over the last dimension: x * rsqrt(mean(x^2) + eps) * weight."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


batch = 16384
hidden = 4096
eps = 1e-6


def get_inputs():
    return [torch.randn(batch, hidden)]


def get_init_inputs():
    return [hidden, eps]
