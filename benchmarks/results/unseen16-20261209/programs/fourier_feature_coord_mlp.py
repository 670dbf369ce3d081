"""Coordinate MLP with Gaussian random Fourier features (Tancik et al. 2020): 2*pi*x@B, sin/cos
concat, ReLU MLP to RGB, plus per-image MSE and PSNR against a target (three outputs)."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_freqs, hidden, in_dim=3, out_dim=3, sigma=10.0):
        super().__init__()
        self.register_buffer("b_matrix", torch.randn(in_dim, num_freqs) * sigma)
        self.mlp = nn.Sequential(
            nn.Linear(2 * num_freqs, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, out_dim),
        )

    def forward(self, coords, target):
        proj = (2.0 * math.pi) * (coords @ self.b_matrix)
        feats = torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)
        rgb = torch.sigmoid(self.mlp(feats))
        mse = (rgb - target).square().mean(dim=(1, 2))
        psnr = -10.0 * torch.log10(mse + 1e-10)
        return rgb, mse, psnr


batch = 2
num_points = 150001
num_freqs = 256
hidden = 256


def get_inputs():
    coords = torch.rand(batch, num_points, 3)
    target = torch.rand(batch, num_points, 3)
    return [coords, target]


def get_init_inputs():
    return [num_freqs, hidden]
