"""Post-norm (GPT-1 style) causal transformer block: fused QKV projection, causal
F.scaled_dot_product_attention, residual then LayerNorm, tanh-GELU MLP, residual then LayerNorm."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_heads, head_dim, mlp_hidden):
        super().__init__()
        hidden = num_heads * head_dim
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, mlp_hidden)
        self.fc2 = nn.Linear(mlp_hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def forward(self, x):
        b, s, h = x.shape
        qkv = self.qkv(x).reshape(b, s, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ctx = ctx.transpose(1, 2).reshape(b, s, h)
        x = self.norm1(x + self.proj(ctx))
        x = self.norm2(x + self.fc2(F.gelu(self.fc1(x), approximate="tanh")))
        return x


batch = 8
seq = 1024
num_heads = 12
head_dim = 64
mlp_hidden = 3072


def get_inputs():
    return [torch.randn(batch, seq, num_heads * head_dim)]


def get_init_inputs():
    return [num_heads, head_dim, mlp_hidden]
