"""Nucleus (top-p) filtering as in HF generation: sort the logits, softmax and cumsum, mask
tokens past the top-p mass, scatter the mask back to vocab order, masked_fill -inf, softmax."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, top_p, temperature):
        super().__init__()
        self.top_p = top_p
        self.temperature = temperature

    def forward(self, logits):
        logits = logits / self.temperature
        sorted_logits, sorted_idx = torch.sort(logits, dim=-1, descending=False)
        cum_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cum_probs <= (1 - self.top_p)
        remove_sorted[..., -1:] = False
        remove = remove_sorted.scatter(1, sorted_idx, remove_sorted)
        logits = logits.masked_fill(remove, float("-inf"))
        return torch.softmax(logits, dim=-1)


batch = 1024
vocab = 32768
top_p = 0.9
temperature = 0.7


def get_inputs():
    return [torch.randn(batch, vocab) * 4]


def get_init_inputs():
    return [top_p, temperature]
