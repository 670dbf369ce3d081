"""GraphSAGE (Hamilton et al.) layer with the max-pooling aggregator: neighbours' features
through a ReLU pooling layer, an elementwise max over each node's in-edges with
scatter_reduce('amax', include_self=False) (isolated nodes keep 0), self and neighbour
linear maps summed, ReLU and L2 normalisation of the output embeddings."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_dim, pool_dim, out_dim):
        super().__init__()
        self.pool = nn.Linear(in_dim, pool_dim)
        self.lin_self = nn.Linear(in_dim, out_dim, bias=False)
        self.lin_neigh = nn.Linear(pool_dim, out_dim)

    def forward(self, x, src, dst):
        msg = torch.relu(self.pool(x))[src]  # [E, P]
        index = dst.unsqueeze(1).expand_as(msg)
        agg = torch.zeros(x.shape[0], msg.shape[1], device=x.device, dtype=x.dtype)
        agg = agg.scatter_reduce(0, index, msg, reduce="amax", include_self=False)
        h = self.lin_self(x) + self.lin_neigh(agg)
        return F.normalize(torch.relu(h), dim=-1)


num_nodes = 131072
num_edges = 524288
in_dim = 128
pool_dim = 128
out_dim = 128


def get_inputs():
    x = torch.randn(num_nodes, in_dim)
    src = torch.randint(0, num_nodes, (num_edges,), dtype=torch.int64)
    dst = torch.randint(0, num_nodes, (num_edges,), dtype=torch.int64)
    return [x, src, dst]


def get_init_inputs():
    return [in_dim, pool_dim, out_dim]
