"""Lattice Boltzmann D2Q9 BGK flow past a cylinder: moments, equilibrium, collision, streaming,
bounce-back."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, height, width, tau=0.8, n_steps=3):
        super().__init__()
        self.omega, self.n_steps = 1.0 / tau, n_steps
        c = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]
        self.shifts = c  # (cx, cy) per population, as Python ints for torch.roll
        self.register_buffer("cx", torch.tensor([v[0] for v in c], dtype=torch.float32))
        self.register_buffer("cy", torch.tensor([v[1] for v in c], dtype=torch.float32))
        self.register_buffer("w", torch.tensor([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4))
        self.register_buffer("opposite", torch.tensor([0, 3, 4, 1, 2, 7, 8, 5, 6]))
        ys = torch.arange(height, dtype=torch.float32)[:, None]
        xs = torch.arange(width, dtype=torch.float32)[None, :]
        radius = max(height // 8, 1)
        solid = (xs - width / 4) ** 2 + (ys - height / 2) ** 2 <= radius ** 2
        self.register_buffer("solid", solid)

    def moments(self, f):
        rho = f.sum(dim=1)  # over the 9 populations
        ux = (f * self.cx[None, :, None, None]).sum(dim=1) / rho
        uy = (f * self.cy[None, :, None, None]).sum(dim=1) / rho
        return rho, ux, uy

    def equilibrium(self, rho, ux, uy):
        cu = self.cx[None, :, None, None] * ux[:, None] + self.cy[None, :, None, None] * uy[:, None]
        usq = (ux * ux + uy * uy)[:, None]
        return self.w[None, :, None, None] * rho[:, None] * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * usq)

    def forward(self, f):
        f = f.clone()
        for _ in range(self.n_steps):
            rho, ux, uy = self.moments(f)
            f.sub_(self.omega * (f - self.equilibrium(rho, ux, uy)))  # BGK collision, in place
            streamed = torch.empty_like(f)
            for q, (sx, sy) in enumerate(self.shifts):
                streamed[:, q] = torch.roll(f[:, q], shifts=(sy, sx), dims=(1, 2))
            # full-way bounce-back inside the cylinder
            f = torch.where(self.solid, streamed.index_select(1, self.opposite), streamed)
        rho, ux, uy = self.moments(f)
        speed = torch.sqrt(ux * ux + uy * uy)
        vorticity = ((torch.roll(uy, -1, dims=2) - torch.roll(uy, 1, dims=2))
                     - (torch.roll(ux, -1, dims=1) - torch.roll(ux, 1, dims=1))) * 0.5
        return f, rho, speed, vorticity


batch = 4
height = 256
width = 512


def get_inputs():
    w = torch.tensor([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
    f = w[None, :, None, None] * (1.0 + 0.05 * torch.rand(batch, 9, height, width))
    f[:, 1] += 0.02  # a uniform push in +x
    return [f]


def get_init_inputs():
    return [height, width]
