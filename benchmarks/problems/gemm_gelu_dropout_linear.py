"""GELU, nn.Dropout in eval mode (the constructor calls eval(): identity), then a Linear."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, out, p):
        super().__init__()
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(hidden, out)
        self.eval()

    def forward(self, x):
        return self.fc(self.drop(F.gelu(x)))


tokens = 16384
hidden = 4096
out = 4096
p = 0.1


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, out, p]
