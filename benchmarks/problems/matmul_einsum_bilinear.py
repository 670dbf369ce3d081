"""Bilinear form through einsum: out[b,o] = sum_ij x1[b,i] W[o,i,j] x2[b,j] + bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in1, in2, out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out, in1, in2) * 0.02)
        self.bias = nn.Parameter(torch.zeros(out))

    def forward(self, x1, x2):
        return torch.einsum("bi,oij,bj->bo", x1, self.weight, x2) + self.bias


batch = 1024
in1 = 256
in2 = 256
out = 512


def get_inputs():
    return [torch.randn(batch, in1), torch.randn(batch, in2)]


def get_init_inputs():
    return [in1, in2, out]
