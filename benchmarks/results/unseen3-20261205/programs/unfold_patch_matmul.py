"""Patch embedding through nn.functional.unfold (im2col) and a matmul with a flattened
weight, then a bias and LayerNorm over the embedding."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, dim, patch):
        super().__init__()
        self.patch = patch
        self.weight = nn.Parameter(torch.randn(dim, cin * patch * patch) * 0.02)
        self.bias = nn.Parameter(torch.zeros(dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        cols = nn.functional.unfold(x, self.patch, stride=self.patch)  # B, C*p*p, L
        y = cols.transpose(1, 2) @ self.weight.t() + self.bias
        return self.norm(y)


batch, cin, size, dim, patch = 16, 3, 224, 384, 16


def get_inputs():
    return [torch.randn(batch, cin, size, size)]


def get_init_inputs():
    return [cin, dim, patch]
