"""PointNet++ set abstraction, the grouping-to-feature step (Qi et al.): for S sampled
centroids with K ball-query neighbours each, neighbour coordinates are made relative to the
centroid (scaled by the radius) and concatenated with the neighbour features into
[B, S, K, 3 + C], a shared MLP (Linear + ReLU, three times, over the last dim) is
applied per point, and the result is max-pooled over the K neighbours. Interesting: a
broadcast subtract over a 4-D tensor, a cat on the last dim, three chained GEMMs on a
flattened [B*S*K, C] view and a max reduction over a middle dim."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, mlp1, mlp2, mlp3, radius):
        super().__init__()
        self.radius = radius
        self.mlp = nn.Sequential(
            nn.Linear(3 + in_channels, mlp1), nn.ReLU(),
            nn.Linear(mlp1, mlp2), nn.ReLU(),
            nn.Linear(mlp2, mlp3), nn.ReLU(),
        )

    def forward(self, grouped_xyz, centroids, grouped_features):
        # grouped_xyz [B, S, K, 3], centroids [B, S, 3], grouped_features [B, S, K, C]
        rel = (grouped_xyz - centroids.unsqueeze(2)) / self.radius
        h = torch.cat([rel, grouped_features], dim=-1)
        h = self.mlp(h)
        return h.max(dim=2).values  # [B, S, mlp3]


batch = 32
npoint = 128  # SA2 of PointNet++ (SSG) on ModelNet
nsample = 64
in_channels = 128
mlp1 = 128
mlp2 = 128
mlp3 = 256


def get_inputs():
    centroids = torch.rand(batch, npoint, 3) * 2 - 1
    offsets = torch.randn(batch, npoint, nsample, 3) * 0.15
    grouped_xyz = centroids.unsqueeze(2) + offsets
    feats = torch.relu(torch.randn(batch, npoint, nsample, in_channels))
    return [grouped_xyz, centroids, feats]


def get_init_inputs():
    return [in_channels, mlp1, mlp2, mlp3, 0.4]
