"""Gated-attention multiple-instance pooling (ABMIL, Ilse et al.) for whole-slide image
classification: patch features reduced by a linear + ReLU, gated attention scores
tanh(Vh) * sigmoid(Uh) per head, a softmax over the instance dim (dim 1, not last) with
a learned per-head temperature and padded patches masked, einsum pooling, classifier."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_dim, dim, attn_dim, heads, num_classes):
        super().__init__()
        self.reduce = nn.Linear(in_dim, dim)
        self.attn_v = nn.Linear(dim, attn_dim)
        self.attn_u = nn.Linear(dim, attn_dim)
        self.attn_w = nn.Linear(attn_dim, heads)
        self.log_temperature = nn.Parameter(torch.full((heads,), -0.5))
        self.classifier = nn.Linear(heads * dim, num_classes)

    def forward(self, feats, lengths):  # feats [B, N, in_dim], lengths [B]
        b, n, _ = feats.shape
        h = torch.relu(self.reduce(feats))
        a = self.attn_w(torch.tanh(self.attn_v(h)) * torch.sigmoid(self.attn_u(h)))  # [B, N, K]
        a = a / self.log_temperature.exp()
        pad = torch.arange(n, device=feats.device)[None, :] >= lengths[:, None]
        a = a.masked_fill(pad[:, :, None], float("-inf"))
        weights = torch.softmax(a, dim=1)
        pooled = torch.einsum("bnk,bnd->bkd", weights, h).reshape(b, -1)
        return self.classifier(pooled), weights


batch = 16
patches = 1024
in_dim = 512
dim = 256
attn_dim = 128
heads = 4
num_classes = 3


def get_inputs():
    feats = torch.relu(torch.randn(batch, patches, in_dim))
    lengths = torch.randint(patches // 4, patches + 1, (batch,))
    return [feats, lengths]


def get_init_inputs():
    return [in_dim, dim, attn_dim, heads, num_classes]
