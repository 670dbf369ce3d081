"""PPO (Schulman et al.) update loss as written in CleanRL's discrete-action PPO: new
log-probabilities of the taken actions gathered from a log-softmax, ratio to the rollout's
log-probabilities (log ratio clamped to +-20 for safety), per-minibatch advantage
normalisation, the clipped surrogate, a clipped value loss around the old values, an
entropy bonus, plus the approx-KL and clip-fraction diagnostics."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, clip_coef, vf_coef, ent_coef):
        super().__init__()
        self.clip_coef = clip_coef
        self.vf_coef = vf_coef
        self.ent_coef = ent_coef

    def forward(self, logits, actions, old_logprob, advantages, values, old_values, returns):
        c = self.clip_coef
        logp_all = F.log_softmax(logits, dim=-1)
        logp = logp_all.gather(1, actions.unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(dim=-1).mean()

        log_ratio = (logp - old_logprob).clamp(-20.0, 20.0)
        ratio = log_ratio.exp()
        adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1.0 - c, 1.0 + c)).mean()

        v_clipped = old_values + (values - old_values).clamp(-c, c)
        v_loss = 0.5 * torch.max((values - returns) ** 2, (v_clipped - returns) ** 2).mean()

        loss = pg_loss - self.ent_coef * entropy + self.vf_coef * v_loss
        approx_kl = ((ratio - 1.0) - log_ratio).mean()
        clip_frac = ((ratio - 1.0).abs() > c).to(logits.dtype).mean()
        return loss, approx_kl, clip_frac


minibatch = 1048576
num_actions = 18


def get_inputs():
    logits = torch.randn(minibatch, num_actions)
    actions = torch.randint(0, num_actions, (minibatch,), dtype=torch.int64)
    old_logprob = torch.log_softmax(logits + 0.1 * torch.randn_like(logits), dim=-1)
    old_logprob = old_logprob.gather(1, actions.unsqueeze(1)).squeeze(1)
    advantages = torch.randn(minibatch) * 2.0
    old_values = torch.randn(minibatch)
    values = old_values + 0.3 * torch.randn(minibatch)
    returns = old_values + torch.randn(minibatch)
    return [logits, actions, old_logprob, advantages, values, old_values, returns]


def get_init_inputs():
    return [0.2, 0.5, 0.01]
