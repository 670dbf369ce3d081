"""Quantile-regression DQN (Dabney et al.) loss with non-crossing quantile heads (quantiles
built as a base value plus a cumsum of softplus increments) and double-DQN action selection:
online and target MLPs produce [B, A, N] quantiles, the chosen-action quantiles are gathered
with int64 actions, the next action is the argmax of the online net's mean quantile value on
the next state, the target distribution r + gamma * (1 - done) * theta' is built with a bool
done mask, the [B, N, N] pairwise TD errors get the Huber loss weighted by
|tau_i - 1{u < 0}| with midpoint fractions tau_i, summed over online quantiles and averaged over
target ones. Returns the mean loss, per-sample losses (priorities) and the int64 next actions."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class QuantileNet(nn.Module):
    def __init__(self, state_dim, hidden, num_actions, num_quantiles):
        super().__init__()
        self.num_actions = num_actions
        self.num_quantiles = num_quantiles
        self.body = nn.Sequential(nn.Linear(state_dim, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.base = nn.Linear(hidden, num_actions)
        self.incr = nn.Linear(hidden, num_actions * num_quantiles)

    def forward(self, s):
        h = self.body(s)
        inc = F.softplus(self.incr(h)).view(-1, self.num_actions, self.num_quantiles) * 0.05
        return self.base(h).unsqueeze(-1) + torch.cumsum(inc, dim=-1)  # [B, A, N] ascending


class Model(nn.Module):
    def __init__(self, state_dim, hidden, num_actions, num_quantiles, gamma, kappa):
        super().__init__()
        self.online = QuantileNet(state_dim, hidden, num_actions, num_quantiles)
        self.target = QuantileNet(state_dim, hidden, num_actions, num_quantiles)
        self.gamma = gamma
        self.kappa = kappa
        tau = (torch.arange(num_quantiles, dtype=torch.float32) + 0.5) / num_quantiles
        self.register_buffer("tau", tau)

    def forward(self, states, actions, rewards, next_states, dones):
        # states, next_states: [B, S]; actions: [B] int64; rewards: [B]; dones: [B] bool
        b = states.shape[0]
        n = self.tau.shape[0]
        theta = self.online(states)
        theta = theta.gather(1, actions.view(b, 1, 1).expand(b, 1, n)).squeeze(1)  # [B, N]
        next_actions = self.online(next_states).mean(dim=-1).argmax(dim=-1)
        q_next = self.target(next_states)
        q_next = q_next.gather(1, next_actions.view(b, 1, 1).expand(b, 1, n)).squeeze(1)
        not_done = (~dones).float().unsqueeze(1)
        target = rewards.unsqueeze(1) + self.gamma * not_done * q_next  # [B, N']
        target = target.detach()

        u = target.unsqueeze(1) - theta.unsqueeze(2)  # [B, N (online), N' (target)]
        abs_u = u.abs()
        huber = torch.where(abs_u <= self.kappa, 0.5 * u * u,
                            self.kappa * (abs_u - 0.5 * self.kappa))
        weight = (self.tau.view(1, n, 1) - (u < 0).float()).abs()
        per_sample = (weight * huber / self.kappa).mean(dim=2).sum(dim=1)
        return per_sample.mean(), per_sample, next_actions


batch = 512
state_dim = 128
hidden = 512
num_actions = 18
num_quantiles = 200


def get_inputs():
    states = torch.randn(batch, state_dim)
    actions = torch.randint(0, num_actions, (batch,))
    rewards = torch.randn(batch).clamp(-1.0, 1.0)
    next_states = torch.randn(batch, state_dim)
    dones = torch.rand(batch) < 0.1
    return [states, actions, rewards, next_states, dones]


def get_init_inputs():
    return [state_dim, hidden, num_actions, num_quantiles, 0.99, 1.0]
