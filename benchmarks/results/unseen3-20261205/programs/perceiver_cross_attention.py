"""Perceiver-style cross attention: a learned latent array expanded over the batch queries
the inputs (nn.MultiheadAttention with batch_first), then a residual and LayerNorm."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, latents, dim, heads):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim) * 0.02)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        q = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
        out, _ = self.attn(q, x, x, need_weights=False)
        return self.norm(q + out)


batch, seq, latents, dim, heads = 16, 2048, 256, 512, 8


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [latents, dim, heads]
