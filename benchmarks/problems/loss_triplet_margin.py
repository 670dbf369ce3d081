"""Triplet margin loss on embeddings: F.triplet_margin_loss (p=2 pairwise distances, hinge with
a margin, mean)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=2)


batch = 32768
dim = 2048
margin = 1.0


def get_inputs():
    a = torch.randn(batch, dim)
    return [a, a + 0.5 * torch.randn(batch, dim), torch.randn(batch, dim)]


def get_init_inputs():
    return [margin]
