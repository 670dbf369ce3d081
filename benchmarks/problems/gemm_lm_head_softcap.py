"""Gemma-2 style output head: final RMSNorm (1 + weight scale), tied-embedding lm_head matmul,
logit soft-capping tanh(x / cap) * cap."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, vocab, cap):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.zeros(hidden))
        self.embed = nn.Parameter(torch.randn(vocab, hidden) * 0.02)
        self.cap = cap

    def forward(self, h):
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        h = h * (1.0 + self.norm_weight)
        logits = h @ self.embed.t()
        return torch.tanh(logits / self.cap) * self.cap


tokens = 4096
hidden = 2048
vocab = 16384
cap = 30.0


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, vocab, cap]
