"""Instant-NGP multiresolution hash encoding with its density MLP: per level the 3-D points
are scaled to the level's grid (power-of-two resolutions), floored to integer corner
coordinates, the 8 cell corners are indexed densely (x + y*(r+1) + z*(r+1)^2) on coarse levels
that fit the table and by the XOR spatial hash with large primes (int64 multiply, ^, %) on
fine levels, the features are gathered from one flat parameter table with per-level offsets,
trilinearly weighted (where(bit, frac, 1 - frac).prod) and concatenated; a small MLP gives
the density (exp of the first output) and the geometry features."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_levels, n_features, table_size, base_resolution, hidden_dim,
                 geo_dim=15):
        super().__init__()
        self.n_levels, self.n_features, self.table_size = n_levels, n_features, table_size
        res = [base_resolution * 2 ** level for level in range(n_levels)]
        self.register_buffer("resolution", torch.tensor(res, dtype=torch.float32))
        self.register_buffer("stride", torch.tensor([r + 1 for r in res], dtype=torch.long))
        self.register_buffer("use_hash",
                             torch.tensor([(r + 1) ** 3 > table_size for r in res]))
        self.register_buffer("level_offset", torch.arange(n_levels) * table_size)
        corners = torch.tensor([[(i >> d) & 1 for d in range(3)] for i in range(8)])
        self.register_buffer("corners", corners)  # [8, 3] of {0, 1}
        self.register_buffer("primes", torch.tensor([1, 2654435761, 805459861]))
        # (values of the scale a trained table has; the paper initialises at +-1e-4)
        self.embeddings = nn.Parameter(
            torch.empty(n_levels * table_size, n_features).uniform_(-1.0, 1.0))
        self.mlp = nn.Sequential(
            nn.Linear(n_levels * n_features, hidden_dim), nn.ReLU(),
            nn.Linear(hidden_dim, 1 + geo_dim),
        )

    def encode(self, x):
        # x: [N, 3] in [0, 1)
        pos = x[:, None, :] * self.resolution[None, :, None]  # [N, L, 3]
        pos_floor = torch.floor(pos)
        frac = pos - pos_floor
        cell = pos_floor.long()
        corner = cell[:, :, None, :] + self.corners  # [N, L, 8, 3]
        stride = self.stride[None, :, None]
        dense = corner[..., 0] + corner[..., 1] * stride + corner[..., 2] * stride * stride
        scaled = corner * self.primes
        hashed = scaled[..., 0] ^ scaled[..., 1] ^ scaled[..., 2]
        index = torch.where(self.use_hash[None, :, None], hashed, dense) % self.table_size
        index = index + self.level_offset[None, :, None]
        feats = F.embedding(index, self.embeddings)  # [N, L, 8, F]
        bit = self.corners.bool()
        w = torch.where(bit, frac[:, :, None, :], 1.0 - frac[:, :, None, :]).prod(dim=-1)
        enc = (w.unsqueeze(-1) * feats).sum(dim=2)  # [N, L, F]
        return enc.flatten(1)

    def forward(self, x):
        h = self.mlp(self.encode(x))
        sigma = torch.exp(h[:, 0])
        geo_feat = h[:, 1:]
        return sigma, geo_feat


n_points = 262144
n_levels = 8
n_features = 2
table_size = 524288
base_resolution = 16
hidden_dim = 64


def get_inputs():
    return [torch.rand(n_points, 3)]


def get_init_inputs():
    return [n_levels, n_features, table_size, base_resolution, hidden_dim]
