"""C51 distributional DQN (Bellemare et al.; the Rainbow projection step): the target
network's return distribution for the chosen next actions is shifted by the n-step reward
and discount, clipped to [v_min, v_max], split between the two neighbouring atoms (floor and
ceil, with the l == u fix) by index_add_ into a flat [B * atoms] buffer, and the loss is the
cross-entropy of the online distribution for the taken actions against that projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, atoms, v_min, v_max, gamma_n):
        super().__init__()
        self.atoms = atoms
        self.v_min = v_min
        self.v_max = v_max
        self.delta = (v_max - v_min) / (atoms - 1)
        self.gamma_n = gamma_n
        self.register_buffer("support", torch.linspace(v_min, v_max, atoms))

    def forward(self, online_logits, actions, target_logits, next_actions, rewards, dones):
        b, n = online_logits.shape[0], self.atoms
        rows = torch.arange(b, device=online_logits.device)
        log_p = F.log_softmax(online_logits[rows, actions], dim=-1)  # [B, atoms]
        with torch.no_grad():
            p_next = F.softmax(target_logits[rows, next_actions], dim=-1)
            not_done = (~dones).to(p_next.dtype).unsqueeze(1)
            tz = rewards.unsqueeze(1) + self.gamma_n * not_done * self.support.unsqueeze(0)
            pos = (tz.clamp(self.v_min, self.v_max) - self.v_min) / self.delta
            lo = pos.floor().long()
            hi = pos.ceil().long()
            lo = torch.where((hi > 0) & (lo == hi), lo - 1, lo)
            hi = torch.where((lo < n - 1) & (lo == hi), hi + 1, hi)
            base = (rows * n).unsqueeze(1)
            m = torch.zeros(b * n, device=p_next.device, dtype=p_next.dtype)
            w_lo = p_next * (hi.to(pos.dtype) - pos)
            w_hi = p_next * (pos - lo.to(pos.dtype))
            m.index_add_(0, (lo + base).reshape(-1), w_lo.reshape(-1))
            m.index_add_(0, (hi + base).reshape(-1), w_hi.reshape(-1))
            m = m.view(b, n)
        return -(m * log_p).sum(dim=1).mean()


batch = 32768
num_actions = 18
atoms = 51


def get_inputs():
    online = torch.randn(batch, num_actions, atoms)
    actions = torch.randint(0, num_actions, (batch,), dtype=torch.int64)
    target = torch.randn(batch, num_actions, atoms)
    next_actions = torch.randint(0, num_actions, (batch,), dtype=torch.int64)
    rewards = torch.randn(batch) * 3.0
    dones = torch.rand(batch) < 0.05
    return [online, actions, target, next_actions, rewards, dones]


def get_init_inputs():
    return [atoms, -10.0, 10.0, 0.99 ** 3]
