"""Expert-choice MoE layer: each expert takes its top-capacity tokens by router probability."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, ffn_dim, num_experts=8, capacity_factor=2):
        super().__init__()
        self.num_experts, self.capacity_factor = num_experts, capacity_factor
        self.norm = nn.LayerNorm(dim)
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, ffn_dim) * dim ** -0.5)
        self.b1 = nn.Parameter(torch.zeros(num_experts, 1, ffn_dim))
        self.w2 = nn.Parameter(torch.randn(num_experts, ffn_dim, dim) * ffn_dim ** -0.5)
        self.b2 = nn.Parameter(torch.zeros(num_experts, 1, dim))

    def forward(self, x):
        b, s, d = x.shape
        n_tokens = b * s
        h = self.norm(x).reshape(n_tokens, d)
        probs = self.router(h).softmax(dim=-1)  # [N, E]
        capacity = n_tokens * self.capacity_factor // self.num_experts
        gates, index = probs.t().topk(capacity, dim=-1)  # [E, k]
        expert_in = h[index]  # [E, k, D]
        hidden = F.gelu(torch.bmm(expert_in, self.w1) + self.b1)
        expert_out = (torch.bmm(hidden, self.w2) + self.b2) * gates.unsqueeze(-1)
        combined = torch.zeros_like(h).index_add_(0, index.flatten(), expert_out.view(-1, d))
        return x + combined.view(b, s, d)


batch = 16
seq_len = 512
dim = 512
ffn_dim = 2048


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, ffn_dim]
