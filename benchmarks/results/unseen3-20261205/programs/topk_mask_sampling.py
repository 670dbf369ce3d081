"""Top-k filtering of next-token logits: temperature, the k-th largest value per row as a
threshold, everything below set to -inf with masked_fill, softmax."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, temperature):
        super().__init__()
        self.k = k
        self.temperature = temperature

    def forward(self, logits):
        logits = logits / self.temperature
        kth = torch.topk(logits, self.k, dim=-1).values[..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.softmax(logits, dim=-1)


batch, vocab = 64, 32000


def get_inputs():
    return [torch.randn(batch, vocab)]


def get_init_inputs():
    return [50, 0.8]
