"""Smooth L1 loss with beta and sum reduction over a 3-D tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, reduction="sum", beta=self.beta)


batch = 16
seq = 2048
hidden = 2048
beta = 0.5


def get_inputs():
    return [torch.randn(batch, seq, hidden), torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [beta]
