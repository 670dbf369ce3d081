"""Geometric multigrid V-cycles for the 2-D Poisson equation -lap(u) = f with zero
Dirichlet boundaries (scientific computing / PDE solvers, e.g. as a physics-informed layer).

Weighted-Jacobi smoothing uses a 5-point Laplacian stencil as conv2d with zero padding,
restriction is full weighting (3x3 conv2d, stride 2), prolongation is bilinear interpolation
(conv_transpose2d, stride 2); the coarse-grid correction recurses over levels. The
vertex-centred hierarchy needs n = 2^k - 1 interior points per side. Returns the solution
and the per-sample residual L2 norm (sqrt of a spatial sum).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, levels, num_cycles, pre_smooth, post_smooth, coarse_iters, omega):
        super().__init__()
        self.levels = levels
        self.num_cycles = num_cycles
        self.pre_smooth = pre_smooth
        self.post_smooth = post_smooth
        self.coarse_iters = coarse_iters
        self.omega = omega
        lap = torch.tensor([[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]])
        fw = torch.tensor([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])
        self.register_buffer("lap", lap.view(1, 1, 3, 3))
        self.register_buffer("restrict_k", (fw / 16.0).view(1, 1, 3, 3))
        self.register_buffer("prolong_k", (fw / 4.0).view(1, 1, 3, 3))

    def _apply_a(self, u, h):
        return F.conv2d(u, self.lap, padding=1) / (h * h)

    def _smooth(self, u, f, h, iters):
        for _ in range(iters):
            u = u + self.omega * (h * h / 4.0) * (f - self._apply_a(u, h))
        return u

    def _vcycle(self, u, f, h, level):
        if level == self.levels - 1:
            return self._smooth(u, f, h, self.coarse_iters)
        u = self._smooth(u, f, h, self.pre_smooth)
        r = f - self._apply_a(u, h)
        r_c = F.conv2d(r, self.restrict_k, stride=2)
        e_c = self._vcycle(torch.zeros_like(r_c), r_c, 2.0 * h, level + 1)
        u = u + F.conv_transpose2d(e_c, self.prolong_k, stride=2)
        return self._smooth(u, f, h, self.post_smooth)

    def forward(self, f, u0):
        # f, u0: [B, 1, n, n] with n = 2^k - 1
        h = 1.0 / (f.shape[-1] + 1)
        u = u0
        for _ in range(self.num_cycles):
            u = self._vcycle(u, f, h, 0)
        r = f - self._apply_a(u, h)
        res_norm = torch.sqrt((r * r).sum(dim=(1, 2, 3)) * h * h)
        return u, res_norm


batch = 16
grid = 127
levels = 5
num_cycles = 2
pre_smooth = 2
post_smooth = 2
coarse_iters = 12
omega = 0.8


def get_inputs():
    return [torch.randn(batch, 1, grid, grid), 0.01 * torch.randn(batch, 1, grid, grid)]


def get_init_inputs():
    return [levels, num_cycles, pre_smooth, post_smooth, coarse_iters, omega]
