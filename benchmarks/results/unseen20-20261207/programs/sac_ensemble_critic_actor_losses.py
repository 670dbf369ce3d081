"""Soft Actor-Critic losses (Haarnoja et al. 2018) for continuous control with a
vectorised critic ensemble and Polyak target critics (reinforcement learning).

The critic ensemble (clipped double-Q, size 2) runs as one batched einsum per layer; the
actor is a tanh-squashed diagonal Gaussian whose reparameterisation noise is an input.
Computes the soft Bellman target (min over target critics, entropy bonus, done mask), the
critic MSE, actor loss and temperature loss. Exercises einsum over stacked weights, log_std
clamp, the stable tanh log-det-Jacobian (softplus), amin over the ensemble and detach.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Ensemble(nn.Module):
    def __init__(self, n, d_in, hidden, d_out):
        super().__init__()
        dims = [d_in, hidden, hidden, d_out]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            self.weights.append(nn.Parameter(torch.randn(n, a, b) / math.sqrt(a)))
            self.biases.append(nn.Parameter(torch.zeros(n, 1, b)))

    def forward(self, x):
        # x: [B, d_in] shared by all members, or [E, B, d_in]
        if x.dim() == 2:
            x = x.unsqueeze(0).expand(self.weights[0].shape[0], -1, -1)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = torch.einsum("ebi,eio->ebo", x, w) + b
            if i < last:
                x = F.relu(x)
        return x.squeeze(-1)  # [E, B]


class Model(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden, ensemble, gamma, init_alpha):
        super().__init__()
        self.actor = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2 * act_dim))
        self.critic = Ensemble(ensemble, obs_dim + act_dim, hidden, 1)
        self.target_critic = Ensemble(ensemble, obs_dim + act_dim, hidden, 1)
        self.target_critic.load_state_dict(self.critic.state_dict())
        self.log_alpha = nn.Parameter(torch.tensor(math.log(init_alpha)))
        self.gamma = gamma
        self.target_entropy = -float(act_dim)

    def _sample(self, obs, eps):
        mu, log_std = self.actor(obs).chunk(2, dim=-1)
        log_std = log_std.clamp(-20.0, 2.0)
        u = mu + log_std.exp() * eps
        action = torch.tanh(u)
        log_prob = (-0.5 * eps.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_prob = log_prob - (2.0 * (math.log(2.0) - u - F.softplus(-2.0 * u))).sum(-1)
        return action, log_prob

    def forward(self, obs, act, reward, next_obs, done, eps_next, eps_cur):
        alpha = self.log_alpha.exp()
        with torch.no_grad():
            next_act, next_logp = self._sample(next_obs, eps_next)
            q_next = self.target_critic(torch.cat([next_obs, next_act], dim=-1)).amin(dim=0)
            target = reward + self.gamma * (1.0 - done) * (q_next - alpha * next_logp)

        q = self.critic(torch.cat([obs, act], dim=-1))  # [E, B]
        critic_loss = 0.5 * (q - target.unsqueeze(0)).pow(2).mean(dim=1).sum()

        new_act, logp = self._sample(obs, eps_cur)
        q_pi = self.critic(torch.cat([obs, new_act], dim=-1)).amin(dim=0)
        actor_loss = (alpha.detach() * logp - q_pi).mean()
        alpha_loss = -(self.log_alpha * (logp + self.target_entropy).detach()).mean()
        return torch.stack([critic_loss, actor_loss, alpha_loss]), target


batch = 256
obs_dim = 24
act_dim = 6
hidden = 256
ensemble = 2
gamma = 0.99
init_alpha = 0.2


def get_inputs():
    return [
        torch.randn(batch, obs_dim),
        torch.rand(batch, act_dim) * 2.0 - 1.0,
        torch.randn(batch),
        torch.randn(batch, obs_dim),
        torch.randint(0, 2, (batch,)).float(),
        torch.randn(batch, act_dim),
        torch.randn(batch, act_dim),
    ]


def get_init_inputs():
    return [obs_dim, act_dim, hidden, ensemble, gamma, init_alpha]
