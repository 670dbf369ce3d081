"""Non-causal F.scaled_dot_product_attention with an explicit scale, head_dim 64."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, scale=self.scale)


batch = 16
heads = 8
seq = 1024
head_dim = 64
scale = 0.125


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [scale]
