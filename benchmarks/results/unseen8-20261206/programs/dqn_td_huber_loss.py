"""DQN (Mnih et al.) update on a replay minibatch with prioritised replay weights: the online
Q-network's value of the taken action (gather), a TD target from the target network's max
over next-state actions, masked at episode ends, the importance-weighted Huber loss, and the
new priorities |TD error| + eps."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _q_net(obs_dim, hidden, num_actions):
    return nn.Sequential(
        nn.Linear(obs_dim, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, num_actions),
    )


class Model(nn.Module):
    def __init__(self, obs_dim, hidden, num_actions, gamma):
        super().__init__()
        self.online = _q_net(obs_dim, hidden, num_actions)
        self.target = _q_net(obs_dim, hidden, num_actions)
        self.gamma = gamma

    def forward(self, obs, actions, rewards, next_obs, dones, is_weights):
        q = self.online(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target(next_obs).max(dim=1).values
            not_done = (~dones).to(q.dtype)
            target = rewards + self.gamma * not_done * next_q
        td = q - target
        loss = (is_weights * F.smooth_l1_loss(q, target, reduction="none")).mean()
        priorities = td.detach().abs() + 1e-6
        return loss, priorities


batch = 131072
obs_dim = 128
hidden = 512
num_actions = 18


def get_inputs():
    obs = torch.randn(batch, obs_dim)
    actions = torch.randint(0, num_actions, (batch,), dtype=torch.int64)
    rewards = torch.randn(batch).clamp(-1.0, 1.0)
    next_obs = obs + 0.1 * torch.randn(batch, obs_dim)
    dones = torch.rand(batch) < 0.02
    is_weights = torch.rand(batch) * 0.6 + 0.4
    return [obs, actions, rewards, next_obs, dones, is_weights]


def get_init_inputs():
    return [obs_dim, hidden, num_actions, 0.99]
