"""Cosine-similarity logits (CLIP / normalised-softmax classifier): F.normalize of features and
class weights, matmul, times a learned exp(logit_scale)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_classes, dim))
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, x):
        x = F.normalize(x, dim=-1)
        w = F.normalize(self.weight, dim=-1)
        return self.logit_scale.exp() * (x @ w.t())


batch = 8192
dim = 1024
num_classes = 8192


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim, num_classes]
