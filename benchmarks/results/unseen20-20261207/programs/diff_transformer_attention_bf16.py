"""Differential attention layer (DIFF Transformer, Ye et al. 2024) in bfloat16.

Queries and keys are projected into 2 * heads half-width heads; two softmax maps per head
are subtracted with a learnable, re-parameterised lambda = exp(lq1.lk1) - exp(lq2.lk2) +
lambda_init (depth-dependent), the result weights double-width value heads, and each head
is RMS-normalised and scaled by (1 - lambda_init) before the output projection. Uses a causal
mask combined with a key-padding mask from integer lengths (masked_fill), fp32 softmax with
bf16 matmuls, view/transpose head layouts, and a bf16 output.
"""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads, layer_idx):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads // 2
        inner = num_heads * 2 * self.head_dim
        self.q_proj = nn.Linear(embed_dim, inner, bias=False)
        self.k_proj = nn.Linear(embed_dim, inner, bias=False)
        self.v_proj = nn.Linear(embed_dim, inner, bias=False)
        self.out_proj = nn.Linear(inner, embed_dim, bias=False)
        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * (layer_idx - 1))
        self.lambda_q1 = nn.Parameter(torch.randn(self.head_dim) * 0.1)
        self.lambda_k1 = nn.Parameter(torch.randn(self.head_dim) * 0.1)
        self.lambda_q2 = nn.Parameter(torch.randn(self.head_dim) * 0.1)
        self.lambda_k2 = nn.Parameter(torch.randn(self.head_dim) * 0.1)
        self.subln_weight = nn.Parameter(torch.ones(2 * self.head_dim))
        self.to(torch.bfloat16)

    def forward(self, x, lengths):
        # x [B, T, D] bf16; lengths [B] int64 in [1, T]
        b, t, _ = x.shape
        h, d = self.num_heads, self.head_dim
        q = self.q_proj(x).view(b, t, 2 * h, d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, 2 * h, d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, h, 2 * d).transpose(1, 2)

        scores = torch.matmul(q, k.transpose(-1, -2)).float() / math.sqrt(d)
        pos = torch.arange(t, device=x.device)
        causal = pos[None, :] > pos[:, None]
        pad = pos[None, :] >= lengths[:, None]
        mask = causal[None, None] | pad[:, None, None, :]
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        probs = probs.view(b, h, 2, t, t)

        lam1 = torch.exp(torch.sum(self.lambda_q1.float() * self.lambda_k1.float()))
        lam2 = torch.exp(torch.sum(self.lambda_q2.float() * self.lambda_k2.float()))
        lam = lam1 - lam2 + self.lambda_init
        attn = (probs[:, :, 0] - lam * probs[:, :, 1]).to(x.dtype)

        out = torch.matmul(attn, v).float()  # [B, H, T, 2d]
        out = out * torch.rsqrt(out.pow(2).mean(-1, keepdim=True) + 1e-5)
        out = (out * self.subln_weight.float() * (1.0 - self.lambda_init)).to(x.dtype)
        out = out.transpose(1, 2).reshape(b, t, h * 2 * d)
        return self.out_proj(out)


batch = 2
seq_len = 256
embed_dim = 384
num_heads = 6
layer_idx = 3


def get_inputs():
    return [
        torch.randn(batch, seq_len, embed_dim, dtype=torch.bfloat16),
        torch.randint(1, seq_len + 1, (batch,)),
    ]


def get_init_inputs():
    return [embed_dim, num_heads, layer_idx]
