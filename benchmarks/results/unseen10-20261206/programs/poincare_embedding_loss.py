"""Poincare embeddings (Nickel and Kiela) for hierarchies / hyperbolic recommenders: node
embeddings kept inside the unit ball by a max-norm renormalisation, the hyperbolic
distance arcosh(1 + 2 |u - v|^2 / ((1 - |u|^2)(1 - |v|^2))) between each anchor and its
positive plus sampled negatives (gathered from the table), and the softmax ranking loss
over negated distances (cross-entropy with the positive at index 0)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _ball_init(n, d):
    direction = F.normalize(torch.randn(n, d), dim=1)
    radius = 0.2 + 0.6 * torch.rand(n, 1)
    return direction * radius


class Model(nn.Module):
    def __init__(self, num_nodes, dim, max_norm):
        super().__init__()
        self.weight = nn.Parameter(_ball_init(num_nodes, dim))
        self.max_norm = max_norm

    def _lookup(self, idx):
        x = F.embedding(idx, self.weight)
        norm = x.norm(dim=-1, keepdim=True).clamp_min(1e-5)
        return x * torch.clamp(self.max_norm / norm, max=1.0)

    def forward(self, anchors, candidates):
        u = self._lookup(anchors).unsqueeze(1)  # [B, 1, D]
        v = self._lookup(candidates)  # [B, 1 + neg, D]
        sq_u = (u * u).sum(dim=-1)
        sq_v = (v * v).sum(dim=-1)
        sq_dist = ((u - v) ** 2).sum(dim=-1)
        arg = 1 + 2 * sq_dist / ((1 - sq_u) * (1 - sq_v))
        dist = torch.acosh(arg)  # [B, 1 + neg]
        target = torch.zeros(dist.shape[0], dtype=torch.int64, device=dist.device)
        return F.cross_entropy(-dist, target), dist


num_nodes = 1048576
dim = 64
batch = 16384
negatives = 50


def get_inputs():
    anchors = torch.randint(0, num_nodes, (batch,), dtype=torch.int64)
    offsets = torch.randint(1, num_nodes, (batch, 1 + negatives), dtype=torch.int64)
    candidates = (anchors[:, None] + offsets) % num_nodes  # never the anchor itself
    return [anchors, candidates]


def get_init_inputs():
    return [num_nodes, dim, 0.9]
