"""Hinge loss mean(clamp(1 - pred * target, min=0)) plus a margin ranking loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, pred, target, a, b):
        hinge = torch.clamp(1 - pred * target, min=0).mean()
        return hinge + F.margin_ranking_loss(a, b, target, margin=0.5)


n = 1 << 22


def get_inputs():
    return [
        torch.randn(n),
        torch.randint(0, 2, (n,)).float() * 2 - 1,
        torch.randn(n),
        torch.randn(n),
    ]


def get_init_inputs():
    return []
