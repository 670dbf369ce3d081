"""A Gaussian policy head: a Linear gives the mean and log standard deviation of each
action, and the log-probability of the taken actions under torch.distributions.Normal,
summed over the action dims, plus the entropy bonus."""

import torch
import torch.nn as nn
from torch.distributions import Normal


class Model(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 256), nn.Tanh())
        self.mu = nn.Linear(256, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim) - 0.5)

    def forward(self, obs, actions):
        h = self.body(obs)
        dist = Normal(self.mu(h), self.log_std.exp())
        return dist.log_prob(actions).sum(-1), dist.entropy().sum(-1).mean()


batch, obs_dim, act_dim = 8192, 128, 16


def get_inputs():
    return [torch.randn(batch, obs_dim), torch.randn(batch, act_dim)]


def get_init_inputs():
    return [obs_dim, act_dim]
