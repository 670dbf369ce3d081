"""E(n)-equivariant graph neural network layer (EGNN, Satorras et al.) on padded batches of
molecules, all atom pairs densely: edge MLP on [h_i, h_j, |x_i - x_j|^2] built by expand + cat,
a sigmoid edge-attention gate, masked (padding and self-pair) aggregation, coordinate updates
along normalised relative vectors weighted by a scalar MLP, and a residual node MLP."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, node_dim, hidden):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(2 * node_dim + 1, hidden), nn.SiLU(),
                                      nn.Linear(hidden, hidden), nn.SiLU())
        self.att = nn.Linear(hidden, 1)
        self.coord_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(),
                                       nn.Linear(hidden, 1, bias=False))
        self.node_mlp = nn.Sequential(nn.Linear(node_dim + hidden, hidden), nn.SiLU(),
                                      nn.Linear(hidden, node_dim))

    def forward(self, h, x, num_atoms):
        # h [B, N, F] atom features, x [B, N, 3] coordinates, num_atoms [B] int64
        B, N, Fd = h.shape
        atom = torch.arange(N, device=h.device).view(1, N) < num_atoms.view(B, 1)
        eye = torch.eye(N, dtype=torch.bool, device=h.device)
        edge = atom.unsqueeze(2) & atom.unsqueeze(1) & ~eye  # [B, N, N]
        edge_f = edge.unsqueeze(3).to(h.dtype)

        rel = x.unsqueeze(2) - x.unsqueeze(1)  # [B, N, N, 3]
        d2 = (rel ** 2).sum(dim=3, keepdim=True)
        pair = torch.cat((h.unsqueeze(2).expand(B, N, N, Fd),
                          h.unsqueeze(1).expand(B, N, N, Fd), d2), dim=3)
        m = self.edge_mlp(pair)
        m = m * torch.sigmoid(self.att(m)) * edge_f  # [B, N, N, H]

        direction = rel / (torch.sqrt(d2) + 1.0)
        neighbours = (num_atoms - 1).clamp_min(1).to(h.dtype).view(B, 1, 1)
        x_new = x + (direction * self.coord_mlp(m)).sum(dim=2) / neighbours
        x_new = x_new * atom.unsqueeze(2).to(h.dtype)

        agg = m.sum(dim=2)
        h_new = h + self.node_mlp(torch.cat((h, agg), dim=2))
        return h_new, x_new


batch = 64
atoms = 64
node_dim = 128
hidden = 128


def get_inputs():
    h = torch.randn(batch, atoms, node_dim)
    x = torch.randn(batch, atoms, 3) * 2.0
    num_atoms = torch.randint(atoms // 2, atoms + 1, (batch,))
    return [h, x, num_atoms]


def get_init_inputs():
    return [node_dim, hidden]
