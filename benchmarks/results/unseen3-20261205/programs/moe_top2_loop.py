"""Mixture of experts with top-2 routing written as a loop over experts: each expert runs
on the tokens routed to it (torch.where on the routing indices: data-dependent sizes) and
index_add_ scatters the weighted outputs back."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, hidden, experts):
        super().__init__()
        self.router = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
            for _ in range(experts)
        )

    def forward(self, x):
        weights, idx = torch.topk(torch.softmax(self.router(x), dim=-1), 2, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(idx == e)
            out.index_add_(0, token, expert(x[token]) * weights[token, slot, None])
        return out


tokens, dim, hidden, experts = 4096, 512, 1024, 8


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, hidden, experts]
