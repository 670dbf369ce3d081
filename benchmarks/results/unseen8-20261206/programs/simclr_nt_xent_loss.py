"""SimCLR (Chen et al., 2020) training loss: both augmented views' backbone features go
through the projection head (Linear-ReLU-Linear), are L2-normalised, all 2N x 2N cosine
similarities are divided by the temperature, the self-similarity diagonal is masked with
-inf, and cross-entropy picks each sample's other view as the positive (NT-Xent)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, feat_dim, proj_dim, temperature):
        super().__init__()
        self.head = nn.Sequential(
            nn.Linear(feat_dim, feat_dim), nn.ReLU(),
            nn.Linear(feat_dim, proj_dim),
        )
        self.temperature = temperature

    def forward(self, h1, h2):
        n = h1.shape[0]
        z = F.normalize(self.head(torch.cat([h1, h2], dim=0)), dim=1)
        sim = z @ z.t() / self.temperature
        eye = torch.eye(2 * n, dtype=torch.bool, device=sim.device)
        sim = sim.masked_fill(eye, float("-inf"))
        idx = torch.arange(n, device=sim.device)
        targets = torch.cat([idx + n, idx])
        return F.cross_entropy(sim, targets)


batch = 4096
feat_dim = 2048
proj_dim = 128


def get_inputs():
    h1 = torch.relu(torch.randn(batch, feat_dim))
    h2 = torch.relu(h1 + 0.5 * torch.randn(batch, feat_dim))
    return [h1, h2]


def get_init_inputs():
    return [feat_dim, proj_dim, 0.5]
