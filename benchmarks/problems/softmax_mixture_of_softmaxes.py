"""Mixture of softmaxes (Yang et al.): K tanh-projected latents per token, each through a
shared vocab projection and softmax, mixed by a softmax prior, then log."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, vocab, n_experts):
        super().__init__()
        self.n_experts = n_experts
        self.latent = nn.Linear(hidden, n_experts * hidden)
        self.prior = nn.Linear(hidden, n_experts, bias=False)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, h):
        b, d = h.shape
        lat = torch.tanh(self.latent(h)).view(b * self.n_experts, d)
        probs = torch.softmax(self.decoder(lat), dim=-1).view(b, self.n_experts, -1)
        prior = torch.softmax(self.prior(h), dim=-1).unsqueeze(-1)
        mix = (probs * prior).sum(dim=1)
        return torch.log(mix + 1e-8)


batch = 1024
hidden = 512
vocab = 16384
n_experts = 4  # below 16: a constant


def get_inputs():
    return [torch.randn(batch, hidden)]


def get_init_inputs():
    return [hidden, vocab, n_experts]
