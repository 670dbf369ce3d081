"""DeepSeek-V3 MoE gate: sigmoid scores, bias-corrected group-limited top-k routing, expert
loads."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, n_experts=256, n_group=8, topk_group=4, top_k=8,
                 routed_scaling_factor=2.5):
        super().__init__()
        self.n_experts, self.n_group = n_experts, n_group
        self.topk_group, self.top_k = topk_group, top_k
        self.scaling = routed_scaling_factor
        self.weight = nn.Parameter(torch.randn(n_experts, hidden) * hidden ** -0.5)
        # the auxiliary-loss-free balancing bias (updated outside the forward pass)
        self.register_buffer("e_score_correction_bias", torch.randn(n_experts) * 0.05)

    def forward(self, hidden_states):
        b, t, h = hidden_states.shape
        x = hidden_states.view(-1, h)
        logits = nn.functional.linear(x.float(), self.weight.float())  # fp32 gate
        scores = logits.sigmoid()
        biased = scores + self.e_score_correction_bias[None]
        n = x.shape[0]
        grouped = biased.view(n, self.n_group, -1)
        group_scores = grouped.topk(2, dim=-1).values.sum(dim=-1)  # [N, G]
        group_idx = group_scores.topk(self.topk_group, dim=-1, sorted=False).indices
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1.0)
        score_mask = group_mask.unsqueeze(-1).expand_as(grouped).reshape(n, -1)
        masked = biased.masked_fill(score_mask == 0, 0.0)
        topk_idx = masked.topk(self.top_k, dim=-1).indices  # selection uses biased scores
        topk_weight = scores.gather(1, topk_idx)  # weights use the raw sigmoid scores
        topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20)
        topk_weight = topk_weight * self.scaling
        load = torch.zeros(self.n_experts, device=x.device)
        load.scatter_add_(0, topk_idx.flatten(), torch.ones(topk_idx.numel(), device=x.device))
        return topk_idx, topk_weight.to(hidden_states.dtype), load / n


batch = 8
seq_len = 512
hidden = 2048


def get_inputs():
    return [torch.randn(batch, seq_len, hidden).to(torch.bfloat16)]


def get_init_inputs():
    return [hidden]
