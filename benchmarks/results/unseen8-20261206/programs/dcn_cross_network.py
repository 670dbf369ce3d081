"""DCN-V2 (Wang et al., Google) parallel cross network: each cross layer computes
x0 * (W x_l + b) + x_l with a full-rank W, a deep ReLU tower runs on x0 beside it, and the
two outputs are concatenated into a logit head."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_dim, num_cross, hidden):
        super().__init__()
        self.cross = nn.ModuleList(nn.Linear(in_dim, in_dim) for _ in range(num_cross))
        self.deep = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )
        self.head = nn.Linear(in_dim + hidden, 1)

    def forward(self, x0):
        x = x0
        for layer in self.cross:
            x = x0 * layer(x) + x
        out = torch.cat([x, self.deep(x0)], dim=-1)
        return self.head(out).squeeze(-1)


batch = 32768
in_dim = 1024
num_cross = 3
hidden = 512


def get_inputs():
    return [torch.randn(batch, in_dim) * 0.5]


def get_init_inputs():
    return [in_dim, num_cross, hidden]
