"""Sparsemax over the last dimension: values sorted in descending order, their cumulative
sums, the support size k_max where 1 + k z_k > cumsum_k, the threshold tau from the
cumsum at k_max, and max(x - tau, 0)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x - x.max(dim=-1, keepdim=True).values
        z, _ = torch.sort(x, dim=-1, descending=True)
        cs = z.cumsum(dim=-1)
        k = torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)
        support = (1 + k * z) > cs
        k_max = support.sum(dim=-1, keepdim=True)
        tau = (cs.gather(-1, k_max - 1) - 1) / k_max.to(x.dtype)
        return torch.clamp(x - tau, min=0)


batch, seq, width = 32, 4096, 128


def get_inputs():
    return [torch.randn(batch, seq, width) * 2]


def get_init_inputs():
    return []
