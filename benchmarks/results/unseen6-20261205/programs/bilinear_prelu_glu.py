"""A bilinear interaction of two feature vectors, PReLU with one slope per output, a GLU
over the features, and a half-weighted gated update of a residual stream."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d1, d2, d_out):
        super().__init__()
        self.bilinear = nn.Bilinear(d1, d2, 2 * d_out)
        self.act = nn.PReLU(num_parameters=2 * d_out)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, d_out))

    def forward(self, x1, x2, residual):
        h = self.act(self.bilinear(x1, x2))
        update = F.glu(h, dim=-1)
        return torch.addcmul(residual, update, self.scale, value=0.5)


batch, d1, d2, d_out = 4096, 256, 256, 256


def get_inputs():
    return [torch.randn(batch, d1), torch.randn(batch, d2), torch.randn(batch, d_out)]


def get_init_inputs():
    return [d1, d2, d_out]
