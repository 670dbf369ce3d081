"""GNN mean aggregation: gather source-node features per edge, scale by the edge weight, ReLU,
index_add into the destination nodes, divide by the in-degree (clamped to 1)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, src, dst, edge_weight):
        msg = torch.relu(x[src] * edge_weight[:, None])
        out = torch.zeros_like(x).index_add_(0, dst, msg)
        deg = torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)
        deg = deg.index_add_(0, dst, torch.ones_like(edge_weight))
        return out / deg.clamp(min=1.0)[:, None]


num_nodes = 65536
num_edges = 1048576
dim = 64


def get_inputs():
    x = torch.randn(num_nodes, dim)
    src = torch.randint(0, num_nodes, (num_edges,), dtype=torch.int64)
    dst = torch.randint(0, num_nodes, (num_edges,), dtype=torch.int64)
    return [x, src, dst, torch.rand(num_edges)]


def get_init_inputs():
    return []
