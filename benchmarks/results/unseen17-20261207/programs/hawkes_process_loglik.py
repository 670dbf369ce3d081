"""Multivariate Hawkes process log-likelihood for marked event sequences (neural temporal point
process baselines): event times from a cumsum of inter-arrival gaps, the [B, L, L] pairwise
lags under a strictly lower-triangular mask, excitation alpha[m_i, m_j] gathered by the int64
marks with exponential decay exp(-beta[m_i] * lag), the intensity at each event, and the
compensator (integral of all intensities up to the last event) in closed form."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_types):
        super().__init__()
        self.raw_mu = nn.Parameter(torch.randn(num_types) * 0.1 - 1.0)
        self.raw_alpha = nn.Parameter(torch.randn(num_types, num_types) * 0.1 - 2.0)
        self.raw_beta = nn.Parameter(torch.randn(num_types) * 0.1)

    def forward(self, gaps, marks):
        # gaps: [B, L] positive inter-arrival times; marks: [B, L] int64 event types
        mu = F.softplus(self.raw_mu)
        alpha = F.softplus(self.raw_alpha)
        beta = F.softplus(self.raw_beta) + 1e-2
        times = torch.cumsum(gaps, dim=1)  # [B, L]
        seq_len = times.shape[1]
        lag = times.unsqueeze(2) - times.unsqueeze(1)  # [B, L(i), L(j)]
        past = torch.ones(seq_len, seq_len, dtype=torch.bool, device=times.device).tril(-1)
        pair_alpha = alpha[marks.unsqueeze(2), marks.unsqueeze(1)]  # alpha[m_i, m_j]
        beta_i = beta[marks].unsqueeze(2)
        kernel = pair_alpha * torch.exp(-beta_i * lag.clamp(min=0.0))
        kernel = kernel.masked_fill(~past, 0.0)
        intensity = mu[marks] + kernel.sum(dim=2)  # [B, L]
        log_term = torch.log(intensity).sum(dim=1)
        horizon = times[:, -1:]  # [B, 1]
        remaining = (horizon - times).unsqueeze(2)  # [B, L, 1]
        alpha_from = alpha.t()[marks]  # [B, L, K]: alpha[k, m_j]
        decay = 1.0 - torch.exp(-beta * remaining)  # [B, L, K]
        compensator = mu.sum() * horizon.squeeze(1) + (alpha_from / beta * decay).sum(dim=(1, 2))
        log_lik = log_term - compensator
        return -log_lik.mean() / seq_len, intensity


batch = 64
seq_len = 512
num_types = 16


def get_inputs():
    gaps = torch.rand(batch, seq_len) + 0.01
    marks = torch.randint(0, num_types, (batch, seq_len))
    return [gaps, marks]


def get_init_inputs():
    return [num_types]
