"""Spatial transformer: a small localisation net predicts an affine transform per image,
affine_grid and grid_sample resample the input."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, size):
        super().__init__()
        self.loc = nn.Sequential(
            nn.Flatten(), nn.Linear(channels * size * size, 32), nn.ReLU(), nn.Linear(32, 6)
        )

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


batch, channels, size = 16, 8, 32


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, size]
