"""Pairwise squared Euclidean distances between two point sets: |x|^2 + |y|^2 - 2 x y^T,
clamped at 0, then a Gaussian (RBF) kernel exp(-d / (2 sigma^2))."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, sigma):
        super().__init__()
        self.sigma = sigma

    def forward(self, x, y):
        x2 = (x * x).sum(dim=1, keepdim=True)
        y2 = (y * y).sum(dim=1, keepdim=True)
        d = x2 + y2.t() - 2.0 * (x @ y.t())
        d = d.clamp_min(0.0)
        return torch.exp(-d / (2.0 * self.sigma ** 2))


m = 8192
n = 8192
dim = 256
sigma = 8.0


def get_inputs():
    return [torch.randn(m, dim), torch.randn(n, dim)]


def get_init_inputs():
    return [sigma]
