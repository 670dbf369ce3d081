"""Sentence-pair embedding training (Sentence-BERT style) with F.cosine_embedding_loss: a
shared linear projection head on both sides, labels +1 for paraphrase pairs and -1 for
unrelated ones, a margin on the negatives, mean reduction."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, proj_dim, margin):
        super().__init__()
        self.proj = nn.Linear(dim, proj_dim)
        self.margin = margin

    def forward(self, a, b, labels):
        za = torch.tanh(self.proj(a))
        zb = torch.tanh(self.proj(b))
        return F.cosine_embedding_loss(za, zb, labels, margin=self.margin)


batch = 32768
dim = 768
proj_dim = 512


def get_inputs():
    a = torch.randn(batch, dim)
    b = a * 0.5 + torch.randn(batch, dim)
    labels = torch.randint(0, 2, (batch,)).float() * 2 - 1
    return [a, b, labels]


def get_init_inputs():
    return [dim, proj_dim, 0.2]
