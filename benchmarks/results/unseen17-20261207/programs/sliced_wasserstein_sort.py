"""Sliced Wasserstein distance between point clouds / feature sets (generative modelling and
domain adaptation): random projection directions (an input) normalised per column, both sets
projected by matmul, sorted along the point (middle) axis, squared differences of the sorted
projections averaged over points; returns the sliced distance per batch element (mean over
projections, square root) and the max-sliced variant (amax over projections)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, y, directions):
        # x, y: [B, N, D] samples of two distributions; directions: [D, P]
        theta = directions / directions.norm(dim=0, keepdim=True).clamp(min=1e-12)
        px = torch.matmul(x, theta).sort(dim=1).values  # [B, N, P]
        py = torch.matmul(y, theta).sort(dim=1).values
        wp = (px - py).abs().pow(self.p).mean(dim=1)  # [B, P]
        sliced = wp.mean(dim=-1).pow(1.0 / self.p)
        max_sliced = wp.amax(dim=-1).pow(1.0 / self.p)
        return sliced, max_sliced


batch = 16
num_points = 4096
dim = 64
num_projections = 256


def get_inputs():
    x = torch.randn(batch, num_points, dim)
    y = torch.randn(batch, num_points, dim) * 1.5 + 0.3
    directions = torch.randn(dim, num_projections)
    return [x, y, directions]


def get_init_inputs():
    return [2.0]
