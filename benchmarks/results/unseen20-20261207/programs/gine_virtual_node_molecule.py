"""OGB-style molecular property predictor: GINE convolutions with bond features and a
virtual node (Hu et al. 2020 "Strategies for Pre-training GNNs"; OGB-molhiv baselines).

Atoms and bonds are categorical feature columns summed through offset embedding tables;
each layer adds the virtual-node state to its graph's atoms (gather by batch vector),
sends relu(h_src + e) messages that are summed with index_add_, applies an MLP with
BatchNorm, and updates the virtual node from a per-graph sum pool. The readout concatenates
mean pooling (index_add_ sums / counts) and max pooling (scatter_reduce amax).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, atom_vocab, bond_vocab, hidden, num_layers, num_graphs, num_tasks):
        super().__init__()
        self.num_graphs = num_graphs
        self.num_layers = num_layers
        atom_off = torch.tensor([0] + list(atom_vocab[:-1])).cumsum(0)
        bond_off = torch.tensor([0] + list(bond_vocab[:-1])).cumsum(0)
        self.register_buffer("atom_off", atom_off)
        self.register_buffer("bond_off", bond_off)
        self.atom_emb = nn.Embedding(sum(atom_vocab), hidden)
        self.bond_embs = nn.ModuleList(
            [nn.Embedding(sum(bond_vocab), hidden) for _ in range(num_layers)])
        self.eps = nn.Parameter(torch.zeros(num_layers))
        self.mlps = nn.ModuleList([
            nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.BatchNorm1d(2 * hidden), nn.ReLU(),
                          nn.Linear(2 * hidden, hidden))
            for _ in range(num_layers)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(hidden) for _ in range(num_layers)])
        self.vn_init = nn.Parameter(torch.zeros(1, hidden))
        self.vn_mlps = nn.ModuleList([
            nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                          nn.ReLU())
            for _ in range(num_layers - 1)])
        self.head = nn.Linear(2 * hidden, num_tasks)

    def forward(self, atom_feats, edge_index, bond_feats, batch):
        # atom_feats [N, Fa] int, edge_index [2, E] int, bond_feats [E, Fb] int, batch [N] int
        n = atom_feats.shape[0]
        h = self.atom_emb(atom_feats + self.atom_off).sum(dim=1)
        vn = self.vn_init.expand(self.num_graphs, -1)
        src, dst = edge_index[0], edge_index[1]
        bond_idx = bond_feats + self.bond_off
        for layer in range(self.num_layers):
            h = h + vn.index_select(0, batch)
            e = self.bond_embs[layer](bond_idx).sum(dim=1)
            msg = F.relu(h.index_select(0, src) + e)
            agg = torch.zeros_like(h).index_add_(0, dst, msg)
            out = self.norms[layer](self.mlps[layer]((1.0 + self.eps[layer]) * h + agg))
            if layer < self.num_layers - 1:
                out = F.relu(out)
                pooled = h.new_zeros(self.num_graphs, h.shape[1]).index_add_(0, batch, h)
                vn = vn + self.vn_mlps[layer](pooled + vn)
            h = out

        ones = h.new_ones(n, 1)
        counts = h.new_zeros(self.num_graphs, 1).index_add_(0, batch, ones).clamp(min=1.0)
        mean_pool = h.new_zeros(self.num_graphs, h.shape[1]).index_add_(0, batch, h) / counts
        idx = batch.unsqueeze(1).expand_as(h)
        max_pool = h.new_zeros(self.num_graphs, h.shape[1]).scatter_reduce(
            0, idx, h, reduce="amax", include_self=False)
        return self.head(torch.cat([mean_pool, max_pool], dim=-1))


num_nodes = 1200
num_edges = 2600
num_graphs = 48
atom_vocab = [119, 4, 12, 12, 10, 6, 6, 2, 2]
bond_vocab = [5, 6, 2]
hidden = 128
num_layers = 3
num_tasks = 12


def get_inputs():
    atoms = torch.stack([torch.randint(0, v, (num_nodes,)) for v in atom_vocab], dim=1)
    bonds = torch.stack([torch.randint(0, v, (num_edges,)) for v in bond_vocab], dim=1)
    return [
        atoms,
        torch.randint(0, num_nodes, (2, num_edges)),
        bonds,
        torch.randint(0, num_graphs, (num_nodes,)),
    ]


def get_init_inputs():
    return [atom_vocab, bond_vocab, hidden, num_layers, num_graphs, num_tasks]
