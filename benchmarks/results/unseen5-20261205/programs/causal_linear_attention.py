"""Causal linear attention: elu(x) + 1 feature maps on queries and keys, running sums of
the key-value outer products and of the keys over the sequence, each query read against
both and the numerator divided by the denominator."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, q, k, v):
        q = F.elu(q) + 1
        k = F.elu(k) + 1
        kv = torch.cumsum(torch.einsum("bhnd,bhne->bhnde", k, v), dim=2)
        num = torch.einsum("bhnd,bhnde->bhne", q, kv)
        den = (q * torch.cumsum(k, dim=2)).sum(dim=-1, keepdim=True)
        return num / (den + self.eps)


batch, heads = 4, 8
seq, head_dim = 4096, 32


def get_inputs():
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [1e-6]
