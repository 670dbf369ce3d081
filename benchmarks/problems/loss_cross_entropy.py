"""Cross entropy of logits against int64 class targets (mean reduction)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


batch = 16384
num_classes = 8192


def get_inputs():
    logits = torch.randn(batch, num_classes)
    targets = torch.randint(0, num_classes, (batch,), dtype=torch.int64)
    return [logits, targets]


def get_init_inputs():
    return []
