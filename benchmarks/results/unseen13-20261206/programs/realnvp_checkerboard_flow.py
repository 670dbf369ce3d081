"""RealNVP density estimate of dequantised images: the logit pre-processing with its
log-determinant (softplus terms), three affine coupling layers with alternating checkerboard
masks built from arange parity, each conditioning on the masked image through a small conv
net whose output is chunked into a tanh-bounded log-scale (learned per-channel rescale) and a
translation, applied to the unmasked half (x * exp(s) + t) with sum(s) added to the
log-determinant; the standard-normal prior log-likelihood turns into bits per dimension."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CouplingLayer(nn.Module):
    def __init__(self, in_channels, mid_channels, reverse_mask):
        super().__init__()
        self.reverse_mask = reverse_mask
        self.in_conv = nn.Conv2d(in_channels, mid_channels, 3, padding=1)
        self.mid_conv = nn.Conv2d(mid_channels, mid_channels, 3, padding=1)
        self.out_conv = nn.Conv2d(mid_channels, 2 * in_channels, 3, padding=1)
        with torch.no_grad():
            self.out_conv.weight.mul_(0.1)
        self.rescale = nn.Parameter(torch.ones(in_channels, 1, 1))

    def checkerboard(self, height, width, like):
        rows = torch.arange(height, device=like.device).view(-1, 1)
        cols = torch.arange(width, device=like.device).view(1, -1)
        mask = ((rows + cols) % 2 == 0).to(like.dtype).view(1, 1, height, width)
        return 1.0 - mask if self.reverse_mask else mask

    def forward(self, x, sldj):
        b = self.checkerboard(x.size(2), x.size(3), x)
        x_b = x * b
        h = F.relu(self.in_conv(x_b))
        h = F.relu(self.mid_conv(h))
        s, t = self.out_conv(h).chunk(2, dim=1)
        s = self.rescale * torch.tanh(s)
        s = s * (1 - b)
        t = t * (1 - b)
        x = x_b + (1 - b) * (x * torch.exp(s) + t)
        sldj = sldj + s.flatten(1).sum(-1)
        return x, sldj


class Model(nn.Module):
    def __init__(self, in_channels, mid_channels, num_couplings=3, data_constraint=0.9):
        super().__init__()
        self.register_buffer("data_constraint", torch.tensor(data_constraint))
        self.couplings = nn.ModuleList(
            [CouplingLayer(in_channels, mid_channels, reverse_mask=(i % 2 == 1))
             for i in range(num_couplings)])

    def pre_process(self, x):
        y = (2 * x - 1) * self.data_constraint
        y = (y + 1) / 2
        y = y.log() - (1.0 - y).log()
        ldj = (F.softplus(y) + F.softplus(-y)
               - F.softplus((1.0 - self.data_constraint).log() - self.data_constraint.log()))
        return y, ldj.flatten(1).sum(-1)

    def forward(self, x):
        z, sldj = self.pre_process(x)
        for coupling in self.couplings:
            z, sldj = coupling(z, sldj)
        num_dims = z[0].numel()
        prior_ll = -0.5 * (z ** 2 + math.log(2 * math.pi))
        prior_ll = prior_ll.flatten(1).sum(-1) - math.log(256) * num_dims
        ll = prior_ll + sldj
        bpd = -ll / (math.log(2) * num_dims)
        return z, bpd


batch = 16
channels = 3
height = 64
width = 64
mid_channels = 64


def get_inputs():
    return [torch.rand(batch, channels, height, width)]


def get_init_inputs():
    return [channels, mid_channels]
