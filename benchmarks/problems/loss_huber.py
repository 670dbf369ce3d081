"""Huber loss with a configurable delta (mean reduction)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta

    def forward(self, pred, target):
        return F.huber_loss(pred, target, delta=self.delta)


rows = 8192
cols = 8192
delta = 0.75


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [delta]
