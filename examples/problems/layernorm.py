import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LayerNorm over the last (hidden) dimension, with weight and bias."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x):
        return self.ln(x)


batch = 8
seq = 1024
hidden = 4096
eps = 1e-5


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, eps]
