"""T5 attention: a relative position bucket (exact below half the buckets, log-spaced above),
a learned per-head bias gathered from an embedding, added to unscaled scores; no causal mask."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, heads, buckets, max_distance):
        super().__init__()
        self.buckets, self.max_distance = buckets, max_distance
        self.rel = nn.Embedding(buckets, heads)

    def bucket(self, rel):
        n = self.buckets // 2
        ret = (rel > 0).long() * n
        rel = rel.abs()
        exact = n // 2
        large = exact + (torch.log(rel.float() / exact + 1e-6) / math.log(self.max_distance / exact)
                         * (n - exact)).long()
        large = torch.minimum(large, torch.full_like(large, n - 1))
        return ret + torch.where(rel < exact, rel, large)

    def forward(self, q, k, v):
        s = q.shape[2]
        pos = torch.arange(s, device=q.device)
        bias = self.rel(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1)[None]
        scores = q @ k.transpose(-1, -2) + bias
        return scores.softmax(-1) @ v


batch, heads, seq, head_dim, buckets, max_distance = 4, 8, 512, 64, 32, 128


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim) for _ in range(3)]


def get_init_inputs():
    return [heads, buckets, max_distance]
