"""Tabular feature embedding: each continuous feature is bucketized against 64 sorted
boundaries, each (feature, bucket) pair looks up its own embedding row, the rows are
summed over features and layer-normalised."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_features, num_boundaries, dim):
        super().__init__()
        self.register_buffer("boundaries", torch.linspace(-3.0, 3.0, num_boundaries))
        buckets = num_boundaries + 1
        self.register_buffer("offsets", torch.arange(num_features) * buckets)
        self.table = nn.Embedding(num_features * buckets, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        ids = torch.bucketize(x, self.boundaries)
        rows = self.table(ids + self.offsets)
        return self.norm(rows.sum(dim=1))


batch = 8192
num_features = 32
dim = 256


def get_inputs():
    return [torch.randn(batch, num_features) * 1.5]


def get_init_inputs():
    return [num_features, 64, dim]
