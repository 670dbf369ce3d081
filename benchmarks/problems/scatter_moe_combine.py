"""Mixture-of-experts combine: each routed token's expert output, scaled by its gate
weight, is added back into its token's row (index_add over the token dim), then a
residual add."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, hidden, expert_out, token_idx, gate):
        combined = torch.zeros_like(hidden).index_add_(0, token_idx, expert_out * gate[:, None])
        return hidden + combined


tokens = 16384
hidden = 2048
top_k = 2


def get_inputs():
    routed = tokens * top_k
    token_idx = torch.arange(tokens).repeat_interleave(top_k)[torch.randperm(routed)]
    return [torch.randn(tokens, hidden), torch.randn(routed, hidden), token_idx,
            torch.rand(routed)]


def get_init_inputs():
    return []
