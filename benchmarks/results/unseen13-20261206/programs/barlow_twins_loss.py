"""Barlow Twins objective on two augmented views' backbone features: a shared projector
(Linear without bias, BatchNorm1d, ReLU, Linear), each view's embeddings standardised over
the batch by an affine-free BatchNorm1d, the empirical cross-correlation matrix z1^T z2 / N,
the invariance term sum((diag - 1)^2) from torch.diagonal and the redundancy-reduction term
over the off-diagonal entries picked by the flatten()[:-1].view(n - 1, n + 1)[:, 1:] trick."""

import torch
import torch.nn as nn


def off_diagonal(x):
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class Model(nn.Module):
    def __init__(self, feature_dim, proj_dim, lambd=0.0051):
        super().__init__()
        self.projector = nn.Sequential(
            nn.Linear(feature_dim, proj_dim, bias=False),
            nn.BatchNorm1d(proj_dim),
            nn.ReLU(inplace=True),
            nn.Linear(proj_dim, proj_dim, bias=False),
        )
        self.bn = nn.BatchNorm1d(proj_dim, affine=False)
        self.lambd = lambd

    def forward(self, y1, y2):
        z1 = self.projector(y1)
        z2 = self.projector(y2)
        c = self.bn(z1).T @ self.bn(z2)
        c = c / y1.size(0)
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        return on_diag + self.lambd * off_diag


batch = 1024
feature_dim = 2048
proj_dim = 2048


def get_inputs():
    return [torch.relu(torch.randn(batch, feature_dim)),
            torch.relu(torch.randn(batch, feature_dim))]


def get_init_inputs():
    return [feature_dim, proj_dim]
