"""Transformer sinusoidal position encoding computed in forward (arange, exp, sin/cos
interleaved by stack and flatten), added to scaled token embeddings, then dropout-free."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        seq = x.shape[1]
        pos = torch.arange(seq, device=x.device, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, self.dim, 2, device=x.device, dtype=torch.float32)
                         * (-math.log(10000.0) / self.dim))
        ang = pos * freq
        pe = torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)
        return x * math.sqrt(self.dim) + pe


batch, seq, dim = 16, 2048, 512


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim]
