"""Tabular feature tokeniser for an FT-Transformer (Gorishniy et al.) with periodic PLR
numerical embeddings ("On Embeddings for Numerical Features in Tabular Deep Learning"):
each numerical feature gets cos/sin of 2 pi * its own learned frequencies, a per-feature
linear map (an einsum with one weight matrix per feature) and ReLU; categorical features
are looked up in one offset table plus a per-feature bias; a CLS token is prepended and the
tokens are layer-normalised."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_numeric, cardinalities, n_freqs, dim, sigma):
        super().__init__()
        self.freqs = nn.Parameter(torch.randn(num_numeric, n_freqs) * sigma)
        self.feat_weight = nn.Parameter(
            torch.randn(num_numeric, 2 * n_freqs, dim) / math.sqrt(2 * n_freqs))
        self.feat_bias = nn.Parameter(torch.randn(num_numeric, dim) * 0.01)
        offsets = torch.cumsum(torch.tensor([0] + cardinalities[:-1]), dim=0)
        self.register_buffer("cat_offsets", offsets)
        self.cat_table = nn.Embedding(sum(cardinalities), dim)
        self.cat_bias = nn.Parameter(torch.randn(len(cardinalities), dim) * 0.01)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x_num, x_cat):
        angles = 2 * math.pi * x_num.unsqueeze(-1) * self.freqs  # [B, Fn, K]
        periodic = torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1)
        num_tokens = torch.relu(
            torch.einsum("bfk,fkd->bfd", periodic, self.feat_weight) + self.feat_bias)
        cat_tokens = self.cat_table(x_cat + self.cat_offsets) + self.cat_bias
        cls = self.cls.expand(x_num.shape[0], -1, -1)
        return self.norm(torch.cat([cls, num_tokens, cat_tokens], dim=1))


batch = 4096
num_numeric = 64
num_categorical = 24
cardinality = 1000
n_freqs = 48
dim = 192


def get_inputs():
    x_num = torch.randn(batch, num_numeric)
    x_cat = torch.randint(0, cardinality, (batch, num_categorical), dtype=torch.int64)
    return [x_num, x_cat]


def get_init_inputs():
    return [num_numeric, [cardinality] * num_categorical, n_freqs, dim, 0.1]
