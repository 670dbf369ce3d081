"""Top-k then top-p (nucleus) filtering of next-token logits, the order generation
samplers apply them in: temperature, the k largest logits per row (sorted descending),
softmax and cumulative sum over those candidates, removal of every candidate whose
preceding mass already exceeds p (so the most likely token always survives), the keep
mask scattered back to vocabulary order, and masked_fill with -inf on the logits. The
nucleus is taken over the top-k candidates only, so the cumulative sums stay short (a
threshold on a cumsum over the whole vocabulary would flip with float32 summation order)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, top_k, top_p, temperature):
        super().__init__()
        self.top_k = top_k
        self.top_p = top_p
        self.temperature = temperature

    def forward(self, logits):
        logits = logits / self.temperature
        k = min(self.top_k, logits.shape[-1])
        top_vals, top_idx = torch.topk(logits, k, dim=-1)
        probs = torch.softmax(top_vals, dim=-1)
        keep_sorted = (torch.cumsum(probs, dim=-1) - probs) <= self.top_p
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, top_idx, keep_sorted)
        return logits.masked_fill(~keep, float("-inf"))


batch = 256
vocab = 128256


def get_inputs():
    return [torch.randn(batch, vocab) * 2.0]


def get_init_inputs():
    return [50, 0.9, 0.7]
