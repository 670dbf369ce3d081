"""KIVI-style asymmetric low-bit KV-cache quantisation followed by a decode attention step.

Keys are quantised per channel in groups of `group_size` tokens, values per token over the
head dimension (KIVI, Liu et al. 2024); the most recent T % group_size tokens stay in full
precision as a residual. Exercises view into token groups, amin/amax reductions along
different axes, round/clamp to integer codes (int8 outputs), dequantisation by broadcasting,
cat with the fp residual, and a small softmax attention over the reconstructed cache.
"""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, group_size, n_bits):
        super().__init__()
        self.group_size = group_size
        self.qmax = float(2 ** n_bits - 1)

    def forward(self, q, k, v):
        # q: [B, H, Q, D]; k, v: [B, H, T, D]
        b, h, t, d = k.shape
        g = self.group_size
        n_q = (t // g) * g

        # Keys: per-channel asymmetric quantisation inside groups of g tokens.
        kq = k[:, :, :n_q].reshape(b, h, n_q // g, g, d)
        k_min = kq.amin(dim=3, keepdim=True)
        k_scale = ((kq.amax(dim=3, keepdim=True) - k_min) / self.qmax).clamp(min=1e-8)
        k_codes = torch.round((kq - k_min) / k_scale).clamp(0.0, self.qmax)
        k_deq = (k_codes * k_scale + k_min).reshape(b, h, n_q, d)

        # Values: per-token asymmetric quantisation over the head dimension.
        vq = v[:, :, :n_q]
        v_min = vq.amin(dim=-1, keepdim=True)
        v_scale = ((vq.amax(dim=-1, keepdim=True) - v_min) / self.qmax).clamp(min=1e-8)
        v_codes = torch.round((vq - v_min) / v_scale).clamp(0.0, self.qmax)
        v_deq = v_codes * v_scale + v_min

        # Full-precision residual window of the newest tokens.
        k_full = torch.cat([k_deq, k[:, :, n_q:]], dim=2)
        v_full = torch.cat([v_deq, v[:, :, n_q:]], dim=2)

        scores = torch.matmul(q, k_full.transpose(-1, -2)) / math.sqrt(d)
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v_full)

        k_codes = k_codes.reshape(b, h, n_q, d).to(torch.int8)
        v_codes = v_codes.to(torch.int8)
        return out, k_codes, v_codes


batch = 4
heads = 8
query_len = 4
cache_len = 500
head_dim = 64
group_size = 32
n_bits = 4


def get_inputs():
    return [
        torch.randn(batch, heads, query_len, head_dim),
        torch.randn(batch, heads, cache_len, head_dim),
        torch.randn(batch, heads, cache_len, head_dim),
    ]


def get_init_inputs():
    return [group_size, n_bits]
