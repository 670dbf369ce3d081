"""Binary cross entropy with logits against soft targets in [0, 1]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.binary_cross_entropy_with_logits(logits, targets)


batch = 16384
labels = 8192


def get_inputs():
    return [torch.randn(batch, labels), torch.rand(batch, labels)]


def get_init_inputs():
    return []
