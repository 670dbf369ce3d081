"""VQ-VAE quantiser: encoder vectors matched to their nearest codebook entry (squared
distances expanded as ||x||^2 - 2 x e^T + ||e||^2, argmin, embedding lookup), a
straight-through output and the codebook plus commitment loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_codes, dim, beta):
        super().__init__()
        self.dim = dim
        self.beta = beta
        self.codebook = nn.Embedding(num_codes, dim)

    def forward(self, z):
        z = z.permute(0, 2, 3, 1).contiguous()
        flat = z.view(-1, self.dim)
        e = self.codebook.weight
        dist = (flat.pow(2).sum(dim=1, keepdim=True)
                - 2 * flat @ e.t()
                + e.pow(2).sum(dim=1))
        idx = dist.argmin(dim=1)
        q = self.codebook(idx).view(z.shape)
        loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(q.detach(), z)
        q = z + (q - z).detach()
        return q.permute(0, 3, 1, 2).contiguous(), loss


batch, dim, height, width, num_codes = 32, 64, 64, 64, 1024


def get_inputs():
    return [torch.randn(batch, dim, height, width)]


def get_init_inputs():
    return [num_codes, dim, 0.25]
