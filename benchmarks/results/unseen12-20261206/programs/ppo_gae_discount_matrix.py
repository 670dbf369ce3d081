"""Generalised advantage estimation (GAE, as in PPO rollouts) for many parallel environments in
its parallel form: TD residuals with done-masked bootstrapping, episode segments from an
exclusive cumulative sum of the done flags, a per-environment [T, T] matrix of (gamma*lambda)^(s-t)
restricted to s >= t inside the same episode, a batched mat-vec, returns, and advantages
standardised over the whole batch."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, gamma, lam):
        super().__init__()
        self.gamma, self.lam = gamma, lam

    def forward(self, rewards, values, dones):
        # rewards [E, T], values [E, T + 1] (last column bootstraps), dones [E, T] bool
        E, T = rewards.shape
        not_done = (~dones).to(rewards.dtype)
        deltas = rewards + self.gamma * values[:, 1:] * not_done - values[:, :-1]
        d = dones.to(torch.int64)
        episode = torch.cumsum(d, dim=1) - d  # dones strictly before t
        same = episode.unsqueeze(2) == episode.unsqueeze(1)  # [E, T(t), T(s)]
        steps = torch.arange(T, device=rewards.device)
        gap = steps.view(1, T) - steps.view(T, 1)  # s - t
        ahead = (gap >= 0).unsqueeze(0)
        decay = torch.pow(self.gamma * self.lam, gap.clamp_min(0).to(rewards.dtype))
        zero = torch.zeros((), dtype=rewards.dtype, device=rewards.device)
        weights = torch.where(same & ahead, decay.unsqueeze(0), zero)
        advantages = torch.bmm(weights, deltas.unsqueeze(2)).squeeze(2)
        returns = advantages + values[:, :-1]
        mean = advantages.mean()
        std = advantages.std()
        normalized = (advantages - mean) / (std + 1e-8)
        return normalized, returns


envs = 256
horizon = 512
gamma = 0.99
lam = 0.95


def get_inputs():
    rewards = torch.randn(envs, horizon)
    values = torch.randn(envs, horizon + 1) * 2
    dones = torch.rand(envs, horizon) < 0.01
    return [rewards, values, dones]


def get_init_inputs():
    return [gamma, lam]
