"""Differentiable top-k selection without Sinkhorn: pairwise-sigmoid soft ranks of linear item
scores, a sigmoid top-k mask, and mask-weighted pooling of the item features (two outputs)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, top_k, rank_temp=0.1, mask_temp=0.5):
        super().__init__()
        self.top_k = top_k
        self.rank_temp = rank_temp
        self.mask_temp = mask_temp
        self.scorer = nn.Linear(dim, 1)

    def forward(self, items, valid):
        # items: [B, N, D]; valid: [B, N] bool (padding slots score -1e4)
        scores = self.scorer(items).squeeze(-1)
        scores = scores.masked_fill(~valid, -1e4)
        diff = (scores[:, None, :] - scores[:, :, None]) / self.rank_temp  # [B, i, j] = s_j - s_i
        soft_rank = 0.5 + torch.sigmoid(diff).sum(dim=-1)  # self term contributes 0.5
        mask = torch.sigmoid((self.top_k + 0.5 - soft_rank) / self.mask_temp)
        mask = mask * valid.to(mask.dtype)
        pooled = torch.einsum("bn,bnd->bd", mask, items) / (mask.sum(dim=1, keepdim=True) + 1e-6)
        return mask, pooled


batch = 64
num_items = 1000
dim = 256
top_k = 100


def get_inputs():
    items = torch.randn(batch, num_items, dim)
    lengths = torch.randint(num_items // 2, num_items + 1, (batch, 1))
    valid = torch.arange(num_items)[None, :] < lengths
    return [items, valid]


def get_init_inputs():
    return [dim, top_k]
