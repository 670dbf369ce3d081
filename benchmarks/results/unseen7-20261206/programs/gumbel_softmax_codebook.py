"""DALL-E dVAE style straight-through Gumbel-softmax over a code grid, with the uniform noise
given as an input: g = -log(-log(u)), soft = softmax((logits + g) / tau) over the codes, a
hard one-hot of its argmax via scatter, the straight-through mix hard - soft.detach() + soft,
the codebook lookup as an einsum over the code axis, and the KL to a uniform prior."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, codes, code_dim, tau):
        super().__init__()
        self.tau = tau
        self.log_codes = math.log(codes)
        self.codebook = nn.Parameter(torch.randn(codes, code_dim) * 0.02)

    def forward(self, logits, u):
        # logits, u: [B, K, H, W]; u is uniform noise in (0, 1)
        g = -torch.log(-torch.log(u.clamp(1e-6, 1.0 - 1e-6)))
        soft = F.softmax((logits + g) / self.tau, dim=1)
        index = soft.argmax(dim=1, keepdim=True)
        hard = torch.zeros_like(soft).scatter_(1, index, 1.0)
        z = hard - soft.detach() + soft
        out = torch.einsum("bkhw,kd->bdhw", z, self.codebook)
        log_q = F.log_softmax(logits, dim=1)
        kl = (log_q.exp() * (log_q + self.log_codes)).sum(dim=1).mean()
        return out, kl


batch = 32
codes = 1024
code_dim = 256
grid = 32


def get_inputs():
    logits = torch.randn(batch, codes, grid, grid)
    u = torch.rand(batch, codes, grid, grid)
    return [logits, u]


def get_init_inputs():
    return [codes, code_dim, 0.9]
