"""IMPALA V-trace: clipped importance weights, reverse-time recursion for v_s, policy-gradient
advantages, losses."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, rho_bar=1.0, c_bar=1.0, pg_rho_bar=1.0, baseline_cost=0.5,
                 entropy_cost=0.01):
        super().__init__()
        self.rho_bar, self.c_bar, self.pg_rho_bar = rho_bar, c_bar, pg_rho_bar
        self.baseline_cost, self.entropy_cost = baseline_cost, entropy_cost

    def forward(self, behaviour_logits, target_logits, actions, rewards, discounts, values,
                bootstrap_value):
        # [T, B, A] logits, [T, B] actions / rewards / discounts / values, [B] bootstrap
        target_logp_all = F.log_softmax(target_logits, dim=-1)
        target_logp = target_logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        behaviour_logp = F.log_softmax(behaviour_logits, dim=-1).gather(
            -1, actions.unsqueeze(-1)).squeeze(-1)
        log_rhos = target_logp - behaviour_logp
        rhos = torch.exp(log_rhos)
        clipped_rhos = torch.clamp(rhos, max=self.rho_bar)
        cs = torch.clamp(rhos, max=self.c_bar)
        values_tp1 = torch.cat((values[1:], bootstrap_value[None]), dim=0)
        deltas = clipped_rhos * (rewards + discounts * values_tp1 - values)

        acc = torch.zeros_like(bootstrap_value)
        vs_minus_v = []
        for t in range(values.shape[0] - 1, -1, -1):
            acc = deltas[t] + discounts[t] * cs[t] * acc
            vs_minus_v.append(acc)
        vs = torch.stack(vs_minus_v[::-1], dim=0) + values
        vs_tp1 = torch.cat((vs[1:], bootstrap_value[None]), dim=0)
        pg_rhos = torch.clamp(rhos, max=self.pg_rho_bar)
        pg_advantages = pg_rhos * (rewards + discounts * vs_tp1 - values)

        pg_loss = -(target_logp * pg_advantages.detach()).sum()
        baseline_loss = 0.5 * (vs.detach() - values).square().sum()
        entropy = -(target_logp_all.exp() * target_logp_all).sum()
        total = pg_loss + self.baseline_cost * baseline_loss - self.entropy_cost * entropy
        return vs, pg_advantages, total


unroll_length = 64
batch = 1024
_NUM_ACTIONS = 18


def get_inputs():
    behaviour_logits = torch.randn(unroll_length, batch, _NUM_ACTIONS)
    target_logits = behaviour_logits + 0.3 * torch.randn(unroll_length, batch, _NUM_ACTIONS)
    actions = torch.randint(0, _NUM_ACTIONS, (unroll_length, batch))
    rewards = torch.randn(unroll_length, batch).clamp(-1, 1)
    discounts = 0.99 * (torch.rand(unroll_length, batch) > 0.02).float()
    values = torch.randn(unroll_length, batch)
    bootstrap_value = torch.randn(batch)
    return [behaviour_logits, target_logits, actions, rewards, discounts, values, bootstrap_value]


def get_init_inputs():
    return []
