"""Checkerboard Metropolis sweeps of the 2-D Ising model on a batch of periodic lattices, one
replica per inverse temperature as in parallel tempering: spins are stored as int8 (+1/-1) and
cast to float for the physics, the four-neighbour field comes from torch.roll along both lattice
axes, the energy change dE = 2 s (J * neighbours + h) is accepted where a pre-drawn uniform is
below exp(-beta dE), and only the sites of the current colour (parity of i + j, built from
aranges) flip, via torch.where on the int8 tensor. After all sweeps it returns the int8 lattice,
the per-replica magnetisation, the energy per site, and the fraction of flips accepted."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, coupling, field):
        super().__init__()
        self.coupling = coupling
        self.field = field

    def forward(self, spins, uniforms, beta):
        # spins: [B, H, W] int8; uniforms: [S, 2, B, H, W] in [0, 1); beta: [B]
        _, h, w = spins.shape
        ii = torch.arange(h, device=spins.device)[:, None]
        jj = torch.arange(w, device=spins.device)[None, :]
        parity = (ii + jj) % 2  # [H, W]
        beta3 = beta.view(-1, 1, 1)
        accepted = torch.zeros_like(beta)
        for sweep in range(uniforms.shape[0]):
            for color in range(2):
                s = spins.float()
                nb = (torch.roll(s, 1, dims=1) + torch.roll(s, -1, dims=1)
                      + torch.roll(s, 1, dims=2) + torch.roll(s, -1, dims=2))
                d_e = 2.0 * s * (self.coupling * nb + self.field)
                prob = torch.exp(torch.clamp(-beta3 * d_e, max=0.0))
                flip = (uniforms[sweep, color] < prob) & (parity == color)
                spins = torch.where(flip, -spins, spins)
                accepted = accepted + flip.float().mean(dim=(1, 2))
        s = spins.float()
        magnet = s.mean(dim=(1, 2))
        bonds = s * (torch.roll(s, -1, dims=1) + torch.roll(s, -1, dims=2))
        energy = (-self.coupling * bonds - self.field * s).mean(dim=(1, 2))
        rate = accepted / (uniforms.shape[0] * 2 * 0.5)
        return spins, magnet, energy, rate


replicas = 32
lattice = 512
sweeps = 4


def get_inputs():
    spins = (torch.randint(0, 2, (replicas, lattice, lattice)) * 2 - 1).to(torch.int8)
    uniforms = torch.rand(sweeps, 2, replicas, lattice, lattice)
    beta = torch.linspace(0.2, 0.8, replicas)
    return [spins, uniforms, beta]


def get_init_inputs():
    return [1.0, 0.01]
