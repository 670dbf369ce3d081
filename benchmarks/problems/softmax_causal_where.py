"""Causal attention probabilities from precomputed scores: a triu(1) boolean mask built in
forward, torch.where(mask, -inf, scores * scale), softmax over keys."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, scores):
        t = scores.shape[-1]
        mask = torch.ones(t, t, dtype=torch.bool, device=scores.device).triu(1)
        neg = torch.full((), float("-inf"), device=scores.device)
        masked = torch.where(mask, neg, scores * self.scale)
        return torch.softmax(masked, dim=-1)


batch = 2
heads = 8
seq = 2048
scale = 0.125


def get_inputs():
    return [torch.randn(batch, heads, seq, seq)]


def get_init_inputs():
    return [scale]
