"""Primer-style feed-forward block in bf16: RMSNorm with fp32 statistics, a gated squared-ReLU
(ReLU^2-GLU) up-projection, the down-projection and the residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, ffn_dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.norm_weight = nn.Parameter(torch.ones(dim))
        self.w_gate = nn.Linear(dim, ffn_dim, bias=False)
        self.w_up = nn.Linear(dim, ffn_dim, bias=False)
        self.w_down = nn.Linear(ffn_dim, dim, bias=False)
        self.to(torch.bfloat16)

    def forward(self, x):
        xf = x.float()
        h = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        h = h.to(x.dtype) * self.norm_weight
        gate = F.relu(self.w_gate(h)).square()
        return x + self.w_down(gate * self.w_up(h))


batch = 8
seq_len = 1000
dim = 1536
ffn_dim = 4096


def get_inputs():
    return [torch.randn(batch, seq_len, dim).to(torch.bfloat16)]


def get_init_inputs():
    return [dim, ffn_dim]
