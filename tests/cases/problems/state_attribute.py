"""A tensor drawn in the constructor as a plain attribute (neither parameter nor buffer,
so not in the state dict), moved to the input's device in forward: the judge must give
the candidate the reference's draw."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.offset = torch.randn(dim)

    def forward(self, x):
        self.offset = self.offset.to(x.device)
        return x + self.offset


batch = 64
dim = 256


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]
