"""Log-softmax over dim=1 of a 2-D tensor of logits."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


batch = 16384
classes = 4096


def get_inputs():
    return [torch.randn(batch, classes)]


def get_init_inputs():
    return []
