"""Gemma-2 style attention logit soft-capping: tanh(scores / cap) * cap before a causal
mask and softmax (hand-written)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, q, k, v):
        s = q.shape[-2]
        scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
        scores = torch.tanh(scores / self.cap) * self.cap
        causal = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        return scores.softmax(-1) @ v


batch, heads, seq, head_dim, cap = 4, 8, 1024, 128, 50.0


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim) for _ in range(3)]


def get_init_inputs():
    return [cap]
