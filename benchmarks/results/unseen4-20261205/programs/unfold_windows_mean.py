"""Sliding windows by Tensor.unfold along time (size 16, step 8), mean and max over each
window, concatenated features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, size, step):
        super().__init__()
        self.size = size
        self.step = step

    def forward(self, x):
        w = x.unfold(1, self.size, self.step)  # [B, W, C, size]
        return torch.cat([w.mean(-1), w.amax(-1)], dim=-1)


batch, time, channels = 64, 4096, 64


def get_inputs():
    return [torch.randn(batch, time, channels)]


def get_init_inputs():
    return [16, 8]
