"""MuZero / EfficientZero categorical value and reward loss over an unrolled trajectory: n-step
bootstrapped value targets for each of the K + 1 unroll steps are built from sliding windows of
rewards and episode-termination flags (Tensor.unfold), an exclusive cumprod of (1 - done) that
stops discounting at episode ends and a gamma^i discount buffer, plus the discounted bootstrap
search value; targets and rewards are squashed by the invertible transform
h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x, clamped to the support, and encoded as two-hot
distributions with floor and two scatter_adds; cross-entropy against log_softmax of the value and
reward logits is weighted per step (1 / K for the recurrent steps) and masked after the
trajectory's end. Also returns the decoded scalar value predictions through the inverse
transform of the softmax expectation."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, gamma, eps):
        super().__init__()
        self.gamma = gamma
        self.eps = eps

    def h(self, x):
        return torch.sign(x) * (torch.sqrt(x.abs() + 1.0) - 1.0) + self.eps * x

    def h_inv(self, y):
        e = self.eps
        t = (torch.sqrt(1.0 + 4.0 * e * (y.abs() + 1.0 + e)) - 1.0) / (2.0 * e)
        return torch.sign(y) * (t * t - 1.0)

    def two_hot(self, x, support):
        size = 2 * support + 1
        x = self.h(x).clamp(-float(support), float(support))
        low = torch.floor(x)
        p_high = (x - low).unsqueeze(-1)
        idx_low = (low.long() + support).clamp(0, size - 1).unsqueeze(-1)
        idx_high = (idx_low + 1).clamp(max=size - 1)
        out = torch.zeros(*x.shape, size, device=x.device, dtype=x.dtype)
        out = out.scatter_add(-1, idx_low, 1.0 - p_high)
        return out.scatter_add(-1, idx_high, p_high)

    def forward(self, rewards, dones, search_values, value_logits, reward_logits, valid_steps):
        # rewards, dones: [B, K + n]; search_values: [B, K + n + 1]
        # value_logits: [B, K + 1, S]; reward_logits: [B, K, S]; valid_steps: [B] int64
        k1 = value_logits.shape[1]
        k = k1 - 1
        n = rewards.shape[1] - k
        support = (value_logits.shape[-1] - 1) // 2
        alive = 1.0 - dones.float()
        r_win = rewards.unfold(1, n, 1)[:, :k1]  # [B, K + 1, n]
        a_win = alive.unfold(1, n, 1)[:, :k1]
        keep = torch.cumprod(a_win, dim=-1)
        keep_excl = torch.cat([torch.ones_like(keep[..., :1]), keep[..., :-1]], dim=-1)
        disc = self.gamma ** torch.arange(n, device=rewards.device, dtype=rewards.dtype)
        target = (r_win * keep_excl * disc).sum(-1)
        target = target + (self.gamma ** n) * keep[..., -1] * search_values[:, n:n + k1]

        steps = torch.arange(k1, device=rewards.device)
        mask = (steps[None, :] < valid_steps[:, None]).float()
        weight = torch.where(steps == 0, 1.0, 1.0 / max(k, 1)).to(rewards.dtype)

        v_logp = torch.log_softmax(value_logits, dim=-1)
        v_loss = -(self.two_hot(target, support) * v_logp).sum(-1)
        r_logp = torch.log_softmax(reward_logits, dim=-1)
        r_loss = -(self.two_hot(rewards[:, :k], support) * r_logp).sum(-1)
        r_loss = torch.cat([torch.zeros_like(r_loss[:, :1]), r_loss], dim=1)
        loss = ((v_loss + r_loss) * weight * mask).sum(-1)

        grid = torch.arange(-support, support + 1, device=rewards.device, dtype=rewards.dtype)
        expect = (torch.softmax(value_logits, dim=-1) * grid).sum(-1)
        return loss, self.h_inv(expect), target


batch = 4096
unroll = 5
td_steps = 10
support = 300


def get_inputs():
    length = unroll + td_steps
    rewards = torch.randn(batch, length) * 5.0
    dones = torch.rand(batch, length) < 0.02
    search_values = torch.randn(batch, length + 1) * 50.0
    value_logits = torch.randn(batch, unroll + 1, 2 * support + 1)
    reward_logits = torch.randn(batch, unroll, 2 * support + 1)
    valid_steps = torch.randint(1, unroll + 2, (batch,))
    return [rewards, dones, search_values, value_logits, reward_logits, valid_steps]


def get_init_inputs():
    return [0.997, 0.001]
