"""Attention scores: softmax(scale * Q @ K^T) over the key axis, batched."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k):
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.softmax(scores, dim=-1)


batch = 64
q_len = 1024
kv_len = 1024
head_dim = 128
scale = 0.08838834764831845


def get_inputs():
    return [torch.randn(batch, q_len, head_dim), torch.randn(batch, kv_len, head_dim)]


def get_init_inputs():
    return [scale]
