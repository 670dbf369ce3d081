"""Batched soft-DTW (Cuturi & Blondel 2017) by anti-diagonal wavefront: squared-distance cost, a
skewed gather of it by an int64 index buffer, and a soft-min (logsumexp) recursion per diagonal."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, len_x, len_y, gamma=0.1):
        super().__init__()
        self.len_x, self.len_y, self.gamma = len_x, len_y, gamma
        # skew[p, i] -> flat index of D[i - 1, p - i - 1], or the padded inf slot len_x * len_y
        p = torch.arange(len_x + len_y + 1)[:, None]
        i = torch.arange(len_x + 1)[None, :]
        j = p - i
        ok = (i >= 1) & (j >= 1) & (j <= len_y)
        flat = (i - 1) * len_y + (j - 1)
        self.register_buffer("skew", torch.where(ok, flat, torch.full_like(flat, len_x * len_y)))

    def forward(self, x, y):
        # x: [B, n, d], y: [B, m, d]
        b = x.shape[0]
        cost = (x.square().sum(-1, keepdim=True) + y.square().sum(-1).unsqueeze(1)
                - 2.0 * torch.bmm(x, y.transpose(1, 2)))  # [B, n, m]
        inf_col = torch.full((b, 1), float("inf"), dtype=x.dtype, device=x.device)
        cost_flat = torch.cat([cost.flatten(1), inf_col], dim=1)
        cost_skew = cost_flat[:, self.skew]  # [B, n + m + 1, n + 1]
        zero_col = torch.zeros_like(inf_col)
        prev2 = torch.cat([zero_col, inf_col.expand(b, self.len_x)], dim=1)  # R on diagonal 0
        prev1 = inf_col.expand(b, self.len_x + 1)  # R on diagonal 1
        g = self.gamma
        for p in range(2, self.len_x + self.len_y + 1):
            cand = torch.stack([prev2[:, :-1], prev1[:, :-1], prev1[:, 1:]], dim=-1)
            softmin = -g * torch.logsumexp(-cand / g, dim=-1)
            cur = torch.cat([inf_col, cost_skew[:, p, 1:] + softmin], dim=1)
            prev2, prev1 = prev1, cur
        return prev1[:, self.len_x]


batch = 4096
len_x = 48
len_y = 40
dim = 32


def get_inputs():
    x = torch.randn(batch, len_x, dim) * 0.3
    y = torch.randn(batch, len_y, dim) * 0.3
    return [x, y]


def get_init_inputs():
    return [len_x, len_y]
