"""Discounted cumulative gain per row: items sorted by predicted score (descending), their
graded relevances gathered in that order, gains 2^rel - 1 weighted by 1 / log2(rank + 2) and
summed."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, relevance):
        order = scores.argsort(dim=-1, descending=True)
        ranked = torch.take_along_dim(relevance, order, dim=-1)
        gains = torch.exp2(ranked) - 1
        ranks = torch.arange(scores.size(-1), device=scores.device, dtype=scores.dtype)
        discount = 1.0 / torch.log2(ranks + 2)
        return (gains * discount).sum(dim=-1)


rows, items = 65536, 256


def get_inputs():
    scores = torch.randn(rows, items)
    relevance = torch.randint(0, 5, (rows, items)).float()
    return [scores, relevance]


def get_init_inputs():
    return []
