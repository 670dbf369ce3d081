"""Direct-summation N-body gravity with Plummer softening, batched over independent
systems (the force kernel of a leapfrog integrator): broadcast pairwise separations
[B, N, N, 3], r^2 + eps^2, its rsqrt cubed, mass-weighted sums over sources for the
accelerations, the softened potential per body, and one kick-drift-kick leapfrog step of
the positions and velocities."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, grav_const, softening, dt):
        super().__init__()
        self.g = grav_const
        self.eps2 = softening ** 2
        self.dt = dt

    def _accel(self, pos, mass):
        diff = pos[:, None, :, :] - pos[:, :, None, :]  # [B, i, j, 3]: r_j - r_i
        r2 = (diff * diff).sum(dim=-1) + self.eps2
        inv_r = torch.rsqrt(r2)
        inv_r3 = inv_r * inv_r * inv_r
        acc = self.g * torch.einsum("bij,bijk->bik", mass[:, None, :] * inv_r3, diff)
        pot = -self.g * (mass[:, None, :] * inv_r).sum(dim=-1)  # includes the softened self term
        return acc, pot

    def forward(self, pos, vel, mass):
        acc, pot = self._accel(pos, mass)
        vel_half = vel + 0.5 * self.dt * acc
        pos_new = pos + self.dt * vel_half
        acc_new, _ = self._accel(pos_new, mass)
        vel_new = vel_half + 0.5 * self.dt * acc_new
        return acc, pot, pos_new, vel_new


systems = 128
bodies = 512


def get_inputs():
    pos = torch.randn(systems, bodies, 3)
    vel = torch.randn(systems, bodies, 3) * 0.1
    mass = torch.rand(systems, bodies) + 0.1
    return [pos, vel, mass]


def get_init_inputs():
    return [1.0 / 512, 0.1, 1e-3]
