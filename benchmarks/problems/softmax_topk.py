"""Temperature-scaled softmax over a vocabulary, then the top-k probabilities (values only)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, temperature, k):
        super().__init__()
        self.temperature = temperature
        self.k = k

    def forward(self, logits):
        probs = torch.softmax(logits / self.temperature, dim=-1)
        return torch.topk(probs, self.k, dim=-1).values


batch = 4096
vocab = 32000
temperature = 0.7
k = 50


def get_inputs():
    return [torch.randn(batch, vocab)]


def get_init_inputs():
    return [temperature, k]
