"""Residual block x + relu(linear(x)) with a square nn.Linear."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)

    def forward(self, x):
        return x + torch.relu(self.linear(x))


batch = 8192
hidden = 4096


def get_inputs():
    return [torch.randn(batch, hidden)]


def get_init_inputs():
    return [hidden]
