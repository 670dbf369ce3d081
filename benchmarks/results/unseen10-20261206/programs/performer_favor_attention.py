"""Performer (Choromanski et al.) FAVOR+ bidirectional attention: pre-LayerNorm, q/k/v
projections, queries and keys scaled by d^-1/4 and mapped through positive random
features exp(w x - |x|^2 / 2 - max) / sqrt(m) with block-orthogonal Gaussian features
(stabilised by the per-query feature max and the per-head global key max), then linear
attention: phi(K)^T V contracted first, divided by phi(Q) . sum phi(K)."""

import torch
import torch.nn as nn


def _orthogonal_features(m, d):
    blocks = []
    for _ in range((m + d - 1) // d):
        q, _ = torch.linalg.qr(torch.randn(d, d))
        blocks.append(q.T)
    w = torch.cat(blocks, dim=0)[:m]
    norms = torch.randn(m, d).norm(dim=1, keepdim=True)
    return w * norms


class Model(nn.Module):
    def __init__(self, dim, heads, num_features):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.register_buffer("features", _orthogonal_features(num_features, self.head_dim))
        self.eps = 1e-4

    def _phi(self, x, is_query):
        m = self.features.shape[0]
        x = x * self.head_dim ** -0.25
        proj = torch.matmul(x, self.features.T)  # [b, h, n, m]
        diag = 0.5 * (x * x).sum(dim=-1, keepdim=True)
        if is_query:
            stab = proj.amax(dim=-1, keepdim=True)
        else:
            stab = proj.amax(dim=(-1, -2), keepdim=True)
        return (torch.exp(proj - diag - stab) + self.eps) * m ** -0.5

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        qp = self._phi(q, True)
        kp = self._phi(k, False)
        kv = torch.matmul(kp.transpose(-1, -2), v)  # [b, h, m, d]
        denom = torch.matmul(qp, kp.sum(dim=-2).unsqueeze(-1))  # [b, h, n, 1]
        o = torch.matmul(qp, kv) / denom
        return x + self.out(o.transpose(1, 2).reshape(b, n, c))


batch = 8
seq_len = 4096
dim = 512
heads = 8
num_features = 256


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, num_features]
