"""Equivariant interatomic-potential edge embedding (NequIP / MACE style): edge vectors from
int64 source/destination indices into atom positions, lengths and unit directions, real
spherical harmonics up to l = 3 written out as polynomials (16 components), a sinusoidal
Bessel radial basis divided by r, a polynomial cutoff envelope (p = 6) zero beyond r_cut, a
radial MLP giving one weight per (channel, l) that is repeated to the 16 (l, m) slots by
repeat_interleave, species embeddings of the source atoms (int64 lookup), the per-edge
tensor [E, C, 16] built by einsum and summed into destination atoms with index_add. Returns the
node features [N, C, 16] and the int64 number of neighbours inside the cutoff."""

import math

import torch
import torch.nn as nn


def real_sph_harm_l3(u):
    x, y, z = u[:, 0], u[:, 1], u[:, 2]
    x2, y2, z2 = x * x, y * y, z * z
    s3, s5, s7, s15 = math.sqrt(3.0), math.sqrt(5.0), math.sqrt(7.0), math.sqrt(15.0)
    comps = [
        torch.ones_like(x),
        s3 * x, s3 * y, s3 * z,
        s15 * x * y, s15 * y * z, 0.5 * s5 * (3.0 * z2 - 1.0), s15 * x * z,
        0.5 * s15 * (x2 - y2),
        math.sqrt(35.0 / 8.0) * y * (3.0 * x2 - y2),
        math.sqrt(105.0) * x * y * z,
        math.sqrt(21.0 / 8.0) * y * (5.0 * z2 - 1.0),
        0.5 * s7 * z * (5.0 * z2 - 3.0),
        math.sqrt(21.0 / 8.0) * x * (5.0 * z2 - 1.0),
        0.5 * math.sqrt(105.0) * z * (x2 - y2),
        math.sqrt(35.0 / 8.0) * x * (x2 - 3.0 * y2),
    ]
    return torch.stack(comps, dim=1)  # [E, 16]


class Model(nn.Module):
    def __init__(self, num_species, channels, num_basis, r_cut, radial_hidden):
        super().__init__()
        self.r_cut = r_cut
        self.channels = channels
        self.species_embed = nn.Embedding(num_species, channels)
        self.register_buffer("bessel_n", torch.arange(1, num_basis + 1, dtype=torch.float32))
        self.radial = nn.Sequential(
            nn.Linear(num_basis, radial_hidden), nn.SiLU(),
            nn.Linear(radial_hidden, radial_hidden), nn.SiLU(),
            nn.Linear(radial_hidden, channels * 4))
        self.register_buffer("l_repeats", torch.tensor([1, 3, 5, 7]))

    def forward(self, pos, species, edge_index):
        # pos: [N, 3]; species: [N] int64; edge_index: [2, E] int64
        src, dst = edge_index[0], edge_index[1]
        vec = pos.index_select(0, dst) - pos.index_select(0, src)
        r = vec.norm(dim=1).clamp(min=1e-6)
        u = vec / r.unsqueeze(1)
        sh = real_sph_harm_l3(u)

        x = r / self.r_cut
        p = 6.0
        env = (1.0 - (p + 1.0) * (p + 2.0) / 2.0 * x.pow(p) + p * (p + 2.0) * x.pow(p + 1.0)
               - p * (p + 1.0) / 2.0 * x.pow(p + 2.0))
        inside = r < self.r_cut
        env = torch.where(inside, env, torch.zeros_like(env))
        basis = math.sqrt(2.0 / self.r_cut) * torch.sin(
            self.bessel_n * math.pi * x.unsqueeze(1)) / r.unsqueeze(1)  # [E, nb]

        w = self.radial(basis * env.unsqueeze(1)).view(-1, self.channels, 4)
        w = w.repeat_interleave(self.l_repeats, dim=2)  # [E, C, 16]
        feat_src = self.species_embed(species).index_select(0, src)  # [E, C]
        msg = torch.einsum("ec,ecs,es->ecs", feat_src, w, sh) * env.view(-1, 1, 1)
        n = pos.shape[0]
        out = torch.zeros(n, self.channels, 16, device=pos.device, dtype=pos.dtype)
        out = out.index_add(0, dst, msg)
        count = torch.zeros(n, dtype=torch.int64, device=pos.device).index_add(
            0, dst, inside.long())
        return out, count


num_atoms = 20000
atoms_per_mol = 25
num_edges = 160000
num_species = 10
channels = 16


def get_inputs():
    mol = torch.arange(num_atoms) // atoms_per_mol
    offsets = torch.randn(num_atoms // atoms_per_mol, 3) * 100.0
    pos = offsets[mol] + torch.rand(num_atoms, 3) * 6.0
    species = torch.randint(0, num_species, (num_atoms,))
    src = torch.randint(0, num_atoms, (num_edges,))
    base = (src // atoms_per_mol) * atoms_per_mol
    shift = torch.randint(1, atoms_per_mol, (num_edges,))
    dst = base + (src - base + shift) % atoms_per_mol
    return [pos, species, torch.stack([src, dst])]


def get_init_inputs():
    return [num_species, channels, 8, 5.0, 64]
