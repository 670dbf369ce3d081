"""Negative log-likelihood under a learned Gaussian mixture with diagonal covariances (a
mixture density output layer / deep-clustering prior): per-sample, per-component
log N(x | mu_k, diag(sigma_k^2)) from the broadcast [N, K, D] standardised differences,
log-stds from a softplus parameterisation, log mixture weights from log_softmax, a
logsumexp over components, and the responsibilities (posterior over components)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_components, dim):
        super().__init__()
        self.means = nn.Parameter(torch.randn(num_components, dim) * 2.0)
        self.raw_scale = nn.Parameter(torch.randn(num_components, dim) * 0.3 + 0.5)
        self.logits = nn.Parameter(torch.randn(num_components) * 0.5)
        self.log_2pi = math.log(2 * math.pi)

    def forward(self, x):
        scale = F.softplus(self.raw_scale) + 1e-3  # [K, D]
        z = (x[:, None, :] - self.means[None]) / scale[None]  # [N, K, D]
        log_prob = -0.5 * (z * z).sum(dim=-1) - torch.log(scale).sum(dim=-1) \
            - 0.5 * x.shape[-1] * self.log_2pi  # [N, K]
        joint = log_prob + torch.log_softmax(self.logits, dim=0)
        log_lik = torch.logsumexp(joint, dim=1)
        resp = torch.exp(joint - log_lik[:, None])
        return -log_lik, resp


num_samples = 32768
num_components = 64
dim = 32


def get_inputs():
    return [torch.randn(num_samples, dim) * 2.0]


def get_init_inputs():
    return [num_components, dim]
