"""GShard / Switch-style top-2 mixture-of-experts layer with expert capacity, bf16 tokens: an
fp32 router, softmax gates, first and second choices by argmax (the second on logits with the
first masked out), position of each token inside its expert's buffer by cumsum of int64 one-hot
assignments over the token axis (second choices queued after all first choices), tokens past
the capacity dropped, gates renormalised over the surviving choices, dispatch into an
[E * C (+1 overflow slot), d] buffer by index_add, per-expert FFN by bmm in bf16, combine by
index_select and a gate-weighted sum. Also the load-balancing auxiliary loss
E * sum_e(f_e * P_e) and the router z-loss mean(logsumexp^2). Returns the output, both losses,
the int64 expert choices and the bool kept flags."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden, num_experts, capacity_factor, num_tokens):
        super().__init__()
        self.num_experts = num_experts
        self.capacity = int(math.ceil(num_tokens * 2 / num_experts * capacity_factor))
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w_in = nn.Parameter((torch.randn(num_experts, dim, hidden) / math.sqrt(dim))
                                 .to(torch.bfloat16))
        self.w_out = nn.Parameter((torch.randn(num_experts, hidden, dim) / math.sqrt(hidden))
                                  .to(torch.bfloat16))

    def forward(self, x):
        # x: [B, L, dim] bf16
        b, l, dim = x.shape  # noqa: E741
        e_num, cap = self.num_experts, self.capacity
        tokens = x.reshape(b * l, dim)
        logits = self.router(tokens.float())  # [T, E] fp32
        gates = logits.softmax(dim=-1)

        first = logits.argmax(dim=-1)
        mask1 = F.one_hot(first, e_num)
        second = logits.masked_fill(mask1.bool(), float("-inf")).argmax(dim=-1)
        mask2 = F.one_hot(second, e_num)

        pos1 = torch.cumsum(mask1, dim=0) - 1
        pos2 = torch.cumsum(mask2, dim=0) - 1 + mask1.sum(dim=0, keepdim=True)
        slot1 = (pos1 * mask1).sum(dim=1)
        slot2 = (pos2 * mask2).sum(dim=1)
        kept1 = slot1 < cap
        kept2 = slot2 < cap

        g1 = gates.gather(1, first.unsqueeze(1)).squeeze(1) * kept1
        g2 = gates.gather(1, second.unsqueeze(1)).squeeze(1) * kept2
        denom = (g1 + g2).clamp(min=1e-9)
        g1, g2 = g1 / denom, g2 / denom

        overflow = e_num * cap
        flat1 = torch.where(kept1, first * cap + slot1, torch.full_like(slot1, overflow))
        flat2 = torch.where(kept2, second * cap + slot2, torch.full_like(slot2, overflow))
        buf = torch.zeros(overflow + 1, dim, dtype=x.dtype, device=x.device)
        buf = buf.index_add(0, flat1, tokens).index_add(0, flat2, tokens)
        expert_in = buf[:overflow].view(e_num, cap, dim)
        hid = F.gelu(torch.bmm(expert_in, self.w_in))
        expert_out = torch.bmm(hid, self.w_out).view(overflow, dim)
        expert_out = torch.cat([expert_out, torch.zeros_like(expert_out[:1])], dim=0)
        y = (g1.unsqueeze(1) * expert_out.index_select(0, flat1).float()
             + g2.unsqueeze(1) * expert_out.index_select(0, flat2).float())
        y = y.to(x.dtype).view(b, l, dim)

        frac = mask1.float().mean(dim=0)
        prob = gates.mean(dim=0)
        aux_loss = e_num * (frac * prob).sum()
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        choices = torch.stack([first, second], dim=1)
        kept = torch.stack([kept1, kept2], dim=1)
        return y, aux_loss, z_loss, choices, kept


batch = 4
seq_len = 1024
dim = 512
hidden = 1024
num_experts = 16


def get_inputs():
    return [torch.randn(batch, seq_len, dim).to(torch.bfloat16)]


def get_init_inputs():
    return [dim, hidden, num_experts, 1.0, batch * seq_len]
