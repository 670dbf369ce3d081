"""TensorFlow-Lattice-style calibrated lattice ensemble for tabular ranking/CTR features:
monotone piecewise-linear calibrators (heights from a cumulative sum of softplus increments,
interpolation as a clamped sum over keypoint segments), random feature subsets gathered by a
fixed index, multilinear interpolation on 2^4-vertex lattices (vertex weights as a product of
torch.where(bit, c, 1 - c)), averaged over the ensemble."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_features, num_keypoints, lattice_rank, input_min, input_max):
        super().__init__()
        kp = torch.linspace(input_min, input_max, num_keypoints)
        self.register_buffer("keypoints", kp.repeat(num_features, 1))  # [F, K]
        self.raw_deltas = nn.Parameter(torch.randn(num_features, num_keypoints - 1) * 0.5)
        groups = num_features // lattice_rank
        g = torch.Generator().manual_seed(1234)
        perm = torch.randperm(num_features, generator=g)[: groups * lattice_rank]
        self.register_buffer("subsets", perm.view(groups, lattice_rank))
        v = torch.arange(2 ** lattice_rank).unsqueeze(1)
        bits = (v >> torch.arange(lattice_rank).unsqueeze(0)) & 1
        self.register_buffer("vertex_bits", bits.bool())  # [2^r, r]
        # TFL's linear initialiser (vertex value grows with its coordinates) plus noise
        linear = bits.sum(dim=1).float() / lattice_rank
        noise = 0.1 * torch.randn(groups, 2 ** lattice_rank)
        self.theta = nn.Parameter(linear.repeat(groups, 1) + noise)
        self.out_bias = nn.Parameter(torch.zeros(()))

    def forward(self, x):  # [B, F]
        kp = self.keypoints
        inc = F.softplus(self.raw_deltas)  # [F, K-1] > 0: a monotone calibrator
        inc = inc / inc.sum(dim=1, keepdim=True)  # heights span [0, 1]
        width = kp[:, 1:] - kp[:, :-1]
        t = ((x.unsqueeze(2) - kp[:, :-1]) / width).clamp(0.0, 1.0)  # [B, F, K-1]
        cal = (t * inc).sum(dim=2)  # [B, F] in [0, 1]
        c = cal[:, self.subsets]  # [B, G, r]
        c = c.unsqueeze(2)  # [B, G, 1, r]
        w = torch.where(self.vertex_bits, c, 1.0 - c).prod(dim=3)  # [B, G, 2^r]
        per_lattice = (w * self.theta).sum(dim=2)  # [B, G]
        return per_lattice.mean(dim=1) + self.out_bias


batch = 65536
num_features = 64
num_keypoints = 10
lattice_rank = 4
input_min = -3.0
input_max = 3.0


def get_inputs():
    return [torch.randn(batch, num_features)]


def get_init_inputs():
    return [num_features, num_keypoints, lattice_rank, input_min, input_max]
