"""Mixture-of-experts router: Linear to 8 expert logits, softmax, top-2 with renormalised
weights, and the Switch-style load-balancing loss from one-hot expert counts."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, n_experts, top_k):
        super().__init__()
        self.gate = nn.Linear(hidden, n_experts, bias=False)
        self.n_experts = n_experts
        self.top_k = top_k

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        weights, experts = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        counts = F.one_hot(experts[:, 0], self.n_experts).to(x.dtype)
        aux = self.n_experts * (counts.mean(dim=0) * probs.mean(dim=0)).sum()
        return weights, experts, aux


tokens = 32768
hidden = 2048
n_experts = 8  # below 16: a constant
top_k = 2


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, n_experts, top_k]
