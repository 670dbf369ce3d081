"""EnCodec residual vector quantiser: eight codebooks, nearest codes, straight-through output."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, codebook_size, num_quantizers=8):
        super().__init__()
        self.codebooks = nn.Parameter(torch.randn(num_quantizers, codebook_size, dim))

    def forward(self, x):
        b, d, t = x.shape
        flat = x.permute(0, 2, 1).reshape(b * t, d)
        residual = flat
        quantized = torch.zeros_like(flat)
        codes = []
        losses = []
        for embed in self.codebooks:
            dist = -(residual.pow(2).sum(1, keepdim=True)
                     - 2 * residual @ embed.t()
                     + embed.pow(2).sum(1)[None, :])
            idx = dist.max(dim=-1).indices
            q = F.embedding(idx, embed)
            losses.append(F.mse_loss(q.detach(), residual))
            residual = residual - q.detach()
            quantized = quantized + q
            codes.append(idx.view(b, t))
        quantized = flat + (quantized - flat).detach()
        out = quantized.view(b, t, d).permute(0, 2, 1)
        return out, torch.stack(codes), torch.stack(losses).mean()


batch = 32
dim = 128
frames = 1024
codebook_size = 1024


def get_inputs():
    return [torch.randn(batch, dim, frames)]


def get_init_inputs():
    return [dim, codebook_size]
