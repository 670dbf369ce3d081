"""Pairwise ranking losses: mean softplus(neg - pos) plus mean -logsigmoid(margin * pos)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, pos, neg):
        l1 = F.softplus(neg - pos).mean()
        l2 = -F.logsigmoid(self.margin * pos).mean()
        return l1 + l2


rows = 8192
cols = 8192
margin = 2.0


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [margin]
