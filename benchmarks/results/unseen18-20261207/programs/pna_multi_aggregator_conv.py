"""Principal Neighbourhood Aggregation (Corso et al.) message passing on an int64 edge list:
edge messages from a linear layer on [x_dst, x_src] (index_select of both endpoints), four
aggregators computed by scatter - mean via index_add divided by in-degree, max and min via
scatter_reduce ("amax" / "amin", include_self=False), standard deviation from the scattered
second moment - each combined with three degree scalers (identity, amplification
log(d + 1) / delta, attenuation delta / log(d + 1)), a post linear layer on the 13 * F
concatenation, LayerNorm, ReLU and a residual; two layers, then per-graph sum and max
readout over an int64 graph-assignment vector."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class PNALayer(nn.Module):
    def __init__(self, dim, delta):
        super().__init__()
        self.delta = delta
        self.pre = nn.Linear(2 * dim, dim)
        self.post = nn.Linear(13 * dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, src, dst, deg, log_deg):
        n, f = x.shape
        msg = self.pre(torch.cat([x.index_select(0, dst), x.index_select(0, src)], dim=1))
        idx = dst.unsqueeze(1).expand(-1, f)
        s1 = torch.zeros_like(x).index_add(0, dst, msg)
        s2 = torch.zeros_like(x).index_add(0, dst, msg * msg)
        mean = s1 / deg
        std = torch.sqrt(torch.relu(s2 / deg - mean * mean) + 1e-5)
        mx = torch.zeros_like(x).scatter_reduce(0, idx, msg, reduce="amax", include_self=False)
        mn = torch.zeros_like(x).scatter_reduce(0, idx, msg, reduce="amin", include_self=False)
        agg = torch.cat([mean, mx, mn, std], dim=1)  # [N, 4F]
        amp = log_deg / self.delta
        att = self.delta / log_deg
        h = torch.cat([x, agg, agg * amp, agg * att], dim=1)
        return x + F.relu(self.norm(self.post(h)))


class Model(nn.Module):
    def __init__(self, in_dim, dim, num_layers, num_graphs, delta):
        super().__init__()
        self.num_graphs = num_graphs
        self.embed = nn.Linear(in_dim, dim)
        self.layers = nn.ModuleList([PNALayer(dim, delta) for _ in range(num_layers)])
        self.head = nn.Linear(2 * dim, 1)

    def forward(self, x, edge_index, graph_id):
        # x: [N, in_dim]; edge_index: [2, E] int64; graph_id: [N] int64 (sorted not required)
        src, dst = edge_index[0], edge_index[1]
        n = x.shape[0]
        deg = torch.zeros(n, device=x.device).index_add(
            0, dst, torch.ones(dst.shape[0], device=x.device)).clamp(min=1.0).unsqueeze(1)
        log_deg = torch.log(deg + 1.0)
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, src, dst, deg, log_deg)
        gsum = torch.zeros(self.num_graphs, h.shape[1], device=h.device).index_add(0, graph_id, h)
        gidx = graph_id.unsqueeze(1).expand_as(h)
        gmax = torch.zeros(self.num_graphs, h.shape[1], device=h.device).scatter_reduce(
            0, gidx, h, reduce="amax", include_self=False)
        return self.head(torch.cat([gsum, gmax], dim=1)).squeeze(1), h


num_nodes = 50000
num_edges = 300000
num_graphs = 500
in_dim = 32
dim = 64


def get_inputs():
    x = torch.randn(num_nodes, in_dim)
    graph_id = torch.arange(num_nodes) * num_graphs // num_nodes
    nodes_per_graph = num_nodes // num_graphs
    src = torch.randint(0, num_nodes, (num_edges,))
    base = (src // nodes_per_graph) * nodes_per_graph
    dst = base + torch.randint(0, nodes_per_graph, (num_edges,))
    edge_index = torch.stack([src, dst])
    return [x, edge_index, graph_id]


def get_init_inputs():
    return [in_dim, dim, 2, num_graphs, 1.8]
