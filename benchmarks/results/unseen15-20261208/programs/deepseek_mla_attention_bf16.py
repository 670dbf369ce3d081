"""DeepSeek-V2 multi-head latent attention (prefill, bf16): low-rank Q/KV with RMSNorm, decoupled
RoPE."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden, q_rank, kv_rank, nope_dim, rope_dim, v_dim, max_pos, heads=8,
                 theta=10000.0):
        super().__init__()
        self.heads, self.nope_dim, self.rope_dim, self.v_dim = heads, nope_dim, rope_dim, v_dim
        self.kv_rank = kv_rank
        self.scale = (nope_dim + rope_dim) ** -0.5
        self.wq_a = nn.Linear(hidden, q_rank, bias=False)
        self.q_norm = RMSNorm(q_rank)
        self.wq_b = nn.Linear(q_rank, heads * (nope_dim + rope_dim), bias=False)
        self.wkv_a = nn.Linear(hidden, kv_rank + rope_dim, bias=False)
        self.kv_norm = RMSNorm(kv_rank)
        self.wkv_b = nn.Linear(kv_rank, heads * (nope_dim + v_dim), bias=False)
        self.wo = nn.Linear(heads * v_dim, hidden, bias=False)
        inv_freq = 1.0 / theta ** (torch.arange(0, rope_dim, 2).float() / rope_dim)
        freqs = torch.outer(torch.arange(max_pos).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.to(torch.bfloat16)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.heads
        q = self.wq_b(self.q_norm(self.wq_a(x))).view(b, t, h, self.nope_dim + self.rope_dim)
        q_nope, q_pe = q.split([self.nope_dim, self.rope_dim], dim=-1)
        kv = self.wkv_a(x)
        c_kv, k_pe = kv.split([self.kv_rank, self.rope_dim], dim=-1)
        kv = self.wkv_b(self.kv_norm(c_kv)).view(b, t, h, self.nope_dim + self.v_dim)
        k_nope, v = kv.split([self.nope_dim, self.v_dim], dim=-1)

        cos = self.cos[:t][None, :, None, :]
        sin = self.sin[:t][None, :, None, :]
        q_pe = q_pe * cos + rotate_half(q_pe) * sin
        k_pe = k_pe.unsqueeze(2) * cos + rotate_half(k_pe.unsqueeze(2)) * sin  # one head
        q = torch.cat((q_nope, q_pe), dim=-1).transpose(1, 2)
        k = torch.cat((k_nope, k_pe.expand(-1, -1, h, -1)), dim=-1).transpose(1, 2)
        v = v.transpose(1, 2)

        scores = (q @ k.transpose(-2, -1)).float() * self.scale  # [B, H, T, T]
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        probs = F.softmax(scores, dim=-1).to(x.dtype)
        out = (probs @ v).transpose(1, 2).reshape(b, t, h * self.v_dim)
        return self.wo(out)


batch = 2
seq_len = 1024
hidden = 1024
q_rank = 384
kv_rank = 256
nope_dim = 64
rope_dim = 32
v_dim = 64


def get_inputs():
    return [torch.randn(batch, seq_len, hidden).to(torch.bfloat16)]


def get_init_inputs():
    return [hidden, q_rank, kv_rank, nope_dim, rope_dim, v_dim, seq_len]
