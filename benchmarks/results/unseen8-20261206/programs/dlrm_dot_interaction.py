"""DLRM (Naumov et al., Facebook) feature interaction: a bottom MLP on the dense features,
one lookup per sparse field in a single concatenated table (per-field row offsets), pairwise
dot products of the [dense, field...] vectors with a batched matmul, the strict upper
triangle picked with precomputed triu_indices, concatenated with the dense vector, and a top
MLP ending in a sigmoid click probability."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_dense, num_fields, rows_per_field, dim, top_hidden):
        super().__init__()
        self.bottom = nn.Sequential(
            nn.Linear(num_dense, 512), nn.ReLU(),
            nn.Linear(512, dim), nn.ReLU(),
        )
        self.table = nn.Embedding(num_fields * rows_per_field, dim)
        self.register_buffer("offsets", torch.arange(num_fields) * rows_per_field)
        n = num_fields + 1
        rows, cols = torch.triu_indices(n, n, offset=1)
        self.register_buffer("rows", rows)
        self.register_buffer("cols", cols)
        self.top = nn.Sequential(
            nn.Linear(dim + rows.numel(), top_hidden), nn.ReLU(),
            nn.Linear(top_hidden, top_hidden // 2), nn.ReLU(),
            nn.Linear(top_hidden // 2, 1),
        )

    def forward(self, dense, sparse_ids):
        x = self.bottom(torch.log1p(dense))
        emb = self.table(sparse_ids + self.offsets)  # [B, F, D]
        t = torch.cat([x.unsqueeze(1), emb], dim=1)  # [B, F + 1, D]
        z = torch.bmm(t, t.transpose(1, 2))
        inter = z[:, self.rows, self.cols]  # [B, (F + 1) * F / 2]
        logit = self.top(torch.cat([x, inter], dim=1))
        return torch.sigmoid(logit).squeeze(1)


batch = 32768
num_dense = 13
num_fields = 26
rows_per_field = 20000
dim = 128
top_hidden = 1024


def get_inputs():
    dense = torch.rand(batch, num_dense) * 100.0
    ids = torch.randint(0, rows_per_field, (batch, num_fields), dtype=torch.int64)
    return [dense, ids]


def get_init_inputs():
    return [num_dense, num_fields, rows_per_field, dim, top_hidden]
