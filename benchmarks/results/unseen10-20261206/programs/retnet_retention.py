"""RetNet (Sun et al.) multi-scale retention, parallel form: per-head decay
gamma = 1 - 2^(-5 - h), a lower-triangular decay matrix gamma^(n - m) built from
arange differences and normalised by the square root of its row sums, rotary (every-two)
position rotation of queries and keys, (Q K^T * D) normalised by its clamped absolute row
sum, times V, a GroupNorm with one group per head, a swish gate, and the output
projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class Model(nn.Module):
    def __init__(self, dim, heads, value_factor):
        super().__init__()
        self.heads = heads
        self.key_dim = dim // heads
        self.value_dim = dim * value_factor
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, self.value_dim, bias=False)
        self.g_proj = nn.Linear(dim, self.value_dim, bias=False)
        self.out_proj = nn.Linear(self.value_dim, dim, bias=False)
        self.group_norm = nn.GroupNorm(heads, self.value_dim, eps=1e-6)
        decay = torch.log(1 - 2.0 ** (-5.0 - torch.arange(heads, dtype=torch.float32)))
        self.register_buffer("decay", decay)
        angle = 1.0 / (10000 ** torch.linspace(0, 1, self.key_dim // 2))
        self.register_buffer("angle", angle.repeat_interleave(2))

    def forward(self, x):
        b, t, _ = x.shape
        h, dk = self.heads, self.key_dim
        pos = torch.arange(t, device=x.device, dtype=x.dtype)
        sin = torch.sin(pos[:, None] * self.angle[None, :])
        cos = torch.cos(pos[:, None] * self.angle[None, :])
        diff = pos[:, None] - pos[None, :]
        mask = torch.exp(self.decay[:, None, None] * diff.clamp(min=0))  # [h, t, t]
        mask = mask.masked_fill(diff < 0, 0.0)
        mask = mask / mask.sum(dim=-1, keepdim=True).sqrt()

        q = self.q_proj(x).view(b, t, h, dk).transpose(1, 2)
        k = self.k_proj(x).view(b, t, h, dk).transpose(1, 2) * dk ** -0.5
        v = self.v_proj(x).view(b, t, h, -1).transpose(1, 2)
        q = q * cos + _rotate_every_two(q) * sin
        k = k * cos + _rotate_every_two(k) * sin

        qk = torch.matmul(q, k.transpose(-1, -2)) * mask
        qk = qk / qk.abs().sum(dim=-1, keepdim=True).clamp(min=1.0)
        out = torch.matmul(qk, v).transpose(1, 2).reshape(b * t, self.value_dim)
        out = self.group_norm(out).view(b, t, self.value_dim)
        out = F.silu(self.g_proj(x)) * out
        return self.out_proj(out)


batch = 8
seq_len = 1024
dim = 1024
heads = 8
value_factor = 2


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, value_factor]
