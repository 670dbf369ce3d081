"""Mean squared error between two 3-D tensors (scalar output)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target)


batch = 32
seq = 4096
hidden = 1024


def get_inputs():
    return [torch.randn(batch, seq, hidden), torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return []
