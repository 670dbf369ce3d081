"""Softplus with beta and threshold: log(1 + exp(beta * x)) / beta."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


batch = 16384
dim = 4096
beta = 2.0
threshold = 15.0


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [beta, threshold]
