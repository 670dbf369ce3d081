"""SchNet (Schuett et al.) interaction block on dense molecules: all-pairs distances,
a Gaussian radial basis expansion, a cosine cutoff, a filter network with shifted
softplus, the continuous-filter convolution (filters times neighbour features, summed
over neighbours with the self pair masked by an eye built in forward), and the atom-wise
output layers with a residual."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _ssp(x):
    return F.softplus(x) - math.log(2.0)


class Model(nn.Module):
    def __init__(self, features, rbf, cutoff):
        super().__init__()
        self.cutoff = cutoff
        self.register_buffer("centers", torch.linspace(0.0, cutoff, rbf))
        self.gamma = 0.5 / (cutoff / (rbf - 1)) ** 2
        self.filter1 = nn.Linear(rbf, features)
        self.filter2 = nn.Linear(features, features)
        self.in2f = nn.Linear(features, features, bias=False)
        self.f2out = nn.Linear(features, features)
        self.dense = nn.Linear(features, features)

    def forward(self, pos, h):  # pos [B, N, 3], h [B, N, F]
        n = pos.shape[1]
        rij = pos[:, :, None, :] - pos[:, None, :, :]
        dist = torch.sqrt((rij * rij).sum(-1) + 1e-9)  # [B, N, N]
        expanded = torch.exp(-self.gamma * (dist[..., None] - self.centers) ** 2)
        cut = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        not_self = ~torch.eye(n, dtype=torch.bool, device=pos.device)
        cut = torch.where((dist < self.cutoff) & not_self, cut, 0.0)
        w = self.filter2(_ssp(self.filter1(expanded))) * cut[..., None]  # [B, N, N, F]
        xj = self.in2f(h)
        conv = (w * xj[:, None, :, :]).sum(dim=2)
        v = self.dense(_ssp(self.f2out(conv)))
        return h + v


batch = 256
atoms = 32
features = 128
rbf = 50
cutoff = 5.0


def get_inputs():
    pos = torch.randn(batch, atoms, 3) * 1.5
    h = torch.randn(batch, atoms, features)
    return [pos, h]


def get_init_inputs():
    return [features, rbf, cutoff]
