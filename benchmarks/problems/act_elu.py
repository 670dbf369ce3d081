"""ELU with alpha on a 3-D tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


batch = 64
channels = 256
length = 4096
alpha = 1.5


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [alpha]
