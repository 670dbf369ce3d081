"""Relational GCN encoder with basis decomposition (Schlichtkrull et al.) and a DistMult decoder
for knowledge-graph link prediction: per-relation weights are never materialised per edge;
instead the node features are projected onto every basis (einsum), each typed edge gathers its
source row of that [N, bases, D] tensor and mixes the bases with its relation's coefficients,
messages are normalised by 1 / c_{i,r} (the in-degree of the destination under that relation,
counted with index_add over the composite int64 key dst * R + rel), summed into destinations
with index_add, added to a self-loop transform and passed through ReLU; two layers, then triples
(head, relation, tail) given as an int64 [Q, 3] tensor are scored with a diagonal relation
embedding. Returns the triple logits and the final node embeddings."""

import torch
import torch.nn as nn


class RGCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_rels, num_bases):
        super().__init__()
        self.bases = nn.Parameter(torch.randn(num_bases, in_dim, out_dim) * in_dim ** -0.5)
        self.coeff = nn.Parameter(torch.randn(num_rels, num_bases) / num_bases ** 0.5)
        self.self_loop = nn.Linear(in_dim, out_dim)

    def forward(self, x, src, dst, rel, edge_norm):
        xb = torch.einsum("ni,bio->nbo", x, self.bases)  # [N, nb, out]
        msg = torch.einsum("eb,ebo->eo", self.coeff[rel], xb[src]) * edge_norm[:, None]
        agg = torch.zeros(x.shape[0], msg.shape[1], device=x.device, dtype=msg.dtype)
        agg = agg.index_add(0, dst, msg)
        return agg + self.self_loop(x)


class Model(nn.Module):
    def __init__(self, num_nodes, dim, num_rels, num_bases):
        super().__init__()
        self.num_rels = num_rels
        self.node_emb = nn.Embedding(num_nodes, dim)
        self.layer1 = RGCNLayer(dim, dim, num_rels, num_bases)
        self.layer2 = RGCNLayer(dim, dim, num_rels, num_bases)
        self.rel_diag = nn.Parameter(torch.randn(num_rels, dim) * 0.1)

    def forward(self, edge_index, edge_type, triples):
        # edge_index: [2, E] int64; edge_type: [E] int64; triples: [Q, 3] int64 (h, r, t)
        src, dst = edge_index[0], edge_index[1]
        n = self.node_emb.num_embeddings
        key = dst * self.num_rels + edge_type
        counts = torch.zeros(n * self.num_rels, device=src.device).index_add(
            0, key, torch.ones(key.shape[0], device=src.device))
        edge_norm = 1.0 / counts[key]
        x = self.node_emb.weight
        x = torch.relu(self.layer1(x, src, dst, edge_type, edge_norm))
        x = self.layer2(x, src, dst, edge_type, edge_norm)
        h = x.index_select(0, triples[:, 0])
        r = self.rel_diag.index_select(0, triples[:, 1])
        t = x.index_select(0, triples[:, 2])
        return (h * r * t).sum(dim=-1), x


num_nodes = 40000
num_edges = 500000
num_rels = 24
num_bases = 4
dim = 96
num_queries = 1000000


def get_inputs():
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    edge_type = torch.randint(0, num_rels, (num_edges,))
    triples = torch.stack([
        torch.randint(0, num_nodes, (num_queries,)),
        torch.randint(0, num_rels, (num_queries,)),
        torch.randint(0, num_nodes, (num_queries,)),
    ], dim=1)
    return [edge_index, edge_type, triples]


def get_init_inputs():
    return [num_nodes, dim, num_rels, num_bases]
