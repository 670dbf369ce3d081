"""AlphaFold 2 triangle multiplicative updates (outgoing, then incoming) on the pair tensor."""

import torch
import torch.nn as nn


class TriangleMultiplication(nn.Module):
    def __init__(self, c_z, c_hidden, outgoing):
        super().__init__()
        self.outgoing = outgoing
        self.norm_in = nn.LayerNorm(c_z)
        self.a_proj = nn.Linear(c_z, c_hidden)
        self.a_gate = nn.Linear(c_z, c_hidden)
        self.b_proj = nn.Linear(c_z, c_hidden)
        self.b_gate = nn.Linear(c_z, c_hidden)
        self.norm_out = nn.LayerNorm(c_hidden)
        self.out_proj = nn.Linear(c_hidden, c_z)
        self.out_gate = nn.Linear(c_z, c_z)

    def forward(self, z, pair_mask):
        zn = self.norm_in(z)
        m = pair_mask.unsqueeze(-1)
        a = torch.sigmoid(self.a_gate(zn)) * self.a_proj(zn) * m
        b = torch.sigmoid(self.b_gate(zn)) * self.b_proj(zn) * m
        if self.outgoing:
            x = torch.einsum("bikc,bjkc->bijc", a, b)
        else:
            x = torch.einsum("bkic,bkjc->bijc", a, b)
        x = self.out_proj(self.norm_out(x))
        return z + torch.sigmoid(self.out_gate(zn)) * x


class Model(nn.Module):
    def __init__(self, c_z, c_hidden):
        super().__init__()
        self.tri_out = TriangleMultiplication(c_z, c_hidden, outgoing=True)
        self.tri_in = TriangleMultiplication(c_z, c_hidden, outgoing=False)

    def forward(self, z, seq_mask):
        m = seq_mask.to(z.dtype)
        pair_mask = m[:, :, None] * m[:, None, :]
        z = self.tri_out(z, pair_mask)
        return self.tri_in(z, pair_mask)


batch = 2
n_res = 256
c_z = 128
c_hidden = 128


def get_inputs():
    z = torch.randn(batch, n_res, n_res, c_z)
    seq_mask = torch.rand(batch, n_res) < 0.9
    return [z, seq_mask]


def get_init_inputs():
    return [c_z, c_hidden]
