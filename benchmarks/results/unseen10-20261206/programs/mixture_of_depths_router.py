"""Mixture-of-Depths (Raposo et al.) routing around one transformer block: a linear
router scores every token, top-k by capacity (T / 8) per sequence picks the tokens that
go through the block, their indices re-sorted to keep causal order, the chosen tokens
gathered, run through causal self-attention and a GELU MLP (pre-LayerNorm), and the
block's update scaled by the sigmoid router weight is scatter_add-ed back into the
residual stream; every other token skips the block unchanged."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads, mlp_ratio, capacity_div):
        super().__init__()
        self.heads = heads
        self.capacity_div = capacity_div
        self.router = nn.Linear(dim, 1)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        cap = max(t // self.capacity_div, 1)
        weights = self.router(x).squeeze(-1)  # [b, t]
        top_w, top_i = torch.topk(weights, cap, dim=1)
        order = torch.argsort(top_i, dim=1)
        idx = torch.gather(top_i, 1, order)
        w = torch.sigmoid(torch.gather(top_w, 1, order))
        gather_idx = idx.unsqueeze(-1).expand(b, cap, d)
        tokens = torch.gather(x, 1, gather_idx)  # [b, cap, d]

        h = self.ln1(tokens)
        q, k, v = self.qkv(h).view(b, cap, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        delta = self.proj(att.transpose(1, 2).reshape(b, cap, d))
        h2 = tokens + delta
        delta = delta + self.fc2(F.gelu(self.fc1(self.ln2(h2))))

        return x.scatter_add(1, gather_idx, delta * w.unsqueeze(-1))


batch = 16
seq_len = 2048
dim = 1024
heads = 16
mlp_ratio = 4
capacity_div = 8


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, mlp_ratio, capacity_div]
