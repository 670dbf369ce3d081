"""Mamba-2 (state space duality) diagonal-block output, as in the minimal SSD reference:
softplus step sizes with a learned bias, A = -exp(A_log), per-chunk cumulative sums of A*dt
turned into a lower-triangular decay matrix (segment sums masked to -inf above the diagonal,
then exp), and the chunk-local output Y = (C B^T * decay) (X * dt) as one einsum."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, heads, chunk):
        super().__init__()
        self.chunk = chunk
        self.a_log = nn.Parameter(torch.log(torch.linspace(1.0, 16.0, heads)))
        self.dt_bias = nn.Parameter(torch.linspace(-4.0, -2.0, heads))

    def forward(self, x, dt, b, c):
        # x: [B, L, H, P], dt: [B, L, H], b and c: [B, L, N] (one group shared by the heads)
        bsz, seqlen, heads, p = x.shape
        q = self.chunk
        nc = seqlen // q
        dt = F.softplus(dt + self.dt_bias)
        a = -torch.exp(self.a_log) * dt  # [B, L, H]
        a = a.reshape(bsz, nc, q, heads).permute(0, 3, 1, 2)  # [B, H, C, Q]
        a_cum = torch.cumsum(a, dim=-1)
        seg = a_cum[..., :, None] - a_cum[..., None, :]  # [B, H, C, Q, Q]
        causal = torch.tril(torch.ones(q, q, dtype=torch.bool, device=x.device))
        decay = torch.exp(seg.masked_fill(~causal, float("-inf")))
        xs = (x * dt[..., None]).reshape(bsz, nc, q, heads, p)
        bs = b.reshape(bsz, nc, q, -1)
        cs = c.reshape(bsz, nc, q, -1)
        y = torch.einsum("bcln,bcsn,bhcls,bcshp->bclhp", cs, bs, decay, xs)
        return y.reshape(bsz, seqlen, heads, p)


batch = 16
seqlen = 2048
heads = 8
head_dim = 64
state = 64
chunk = 64


def get_inputs():
    x = torch.randn(batch, seqlen, heads, head_dim)
    dt = torch.randn(batch, seqlen, heads)
    b = torch.randn(batch, seqlen, state) * 0.2
    c = torch.randn(batch, seqlen, state) * 0.2
    return [x, dt, b, c]


def get_init_inputs():
    return [heads, chunk]
