"""APPNP (Klicpera et al.) node classification on a sparse graph given as an int64 edge list:
a two-layer MLP predicts per-node logits, self loops are appended, symmetric degree
normalisation deg^-1/2[src] * deg^-1/2[dst] with degrees from index_add, then K steps of
personalised-PageRank propagation h = (1 - alpha) * A_hat h + alpha * h0, each an index_select
of source rows and an index_add into destinations; log-softmax class scores."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_dim, hidden_dim, num_classes, num_iters, alpha):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden_dim)
        self.lin2 = nn.Linear(hidden_dim, num_classes)
        self.num_iters = num_iters
        self.alpha = alpha

    def forward(self, x, edge_index):
        # x: [N, in_dim]; edge_index: [2, E] int64 (source row, destination row)
        n = x.shape[0]
        loops = torch.arange(n, device=x.device)
        src = torch.cat([edge_index[0], loops])
        dst = torch.cat([edge_index[1], loops])
        deg = torch.zeros(n, dtype=x.dtype, device=x.device).index_add(
            0, dst, torch.ones_like(dst, dtype=x.dtype))
        dinv = deg.rsqrt()
        norm = (dinv[src] * dinv[dst]).unsqueeze(1)  # [E + N, 1]
        h0 = self.lin2(F.relu(self.lin1(x)))
        h = h0
        for _ in range(self.num_iters):
            msg = h.index_select(0, src) * norm
            h = (1.0 - self.alpha) * torch.zeros_like(h).index_add(0, dst, msg) + self.alpha * h0
        return F.log_softmax(h, dim=-1)


num_nodes = 100000
num_edges = 1000000
in_dim = 128
hidden_dim = 64
num_classes = 16


def get_inputs():
    x = torch.randn(num_nodes, in_dim)
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    return [x, edge_index]


def get_init_inputs():
    return [in_dim, hidden_dim, num_classes, 10, 0.1]
